import { describe, expect, it } from 'vitest'
import { splitStatements } from '../../src/storage/migrate.js'

describe('splitStatements', () => {
  it('splits on semicolons at the end of a line and drops comment lines', () => {
    const sql = '-- a table\nCREATE TABLE a (id int, note text DEFAULT \'x;y\');\n\n  -- an index\nCREATE INDEX a_id ON a (id);\n'
    expect(splitStatements(sql)).toEqual(["CREATE TABLE a (id int, note text DEFAULT 'x;y')", 'CREATE INDEX a_id ON a (id)'])
  })

  it('keeps a dollar-quoted function body whole, its comments and inner statements included', () => {
    const body = [
      'CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $fn$',
      'BEGIN',
      '  -- count the change',
      '  UPDATE counters SET n = n + 1;',
      "  PERFORM 'a $$ inside';",
      '  RETURN NULL;',
      'END',
      '$fn$',
    ].join('\n')
    const sql = `${body};\nCREATE TRIGGER t AFTER INSERT ON a FOR EACH STATEMENT EXECUTE FUNCTION touch();`
    expect(splitStatements(sql)).toEqual([body, 'CREATE TRIGGER t AFTER INSERT ON a FOR EACH STATEMENT EXECUTE FUNCTION touch()'])
  })
})
