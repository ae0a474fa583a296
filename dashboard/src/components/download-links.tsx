import { apiUrl, type RequestOptions } from '../api/client.js'

/**
 * Links that download a log's export with the filters shown (`path` is the export's, under
 * /api/v1). A plain GET: the browser sends the session cookie, and the server names the file.
 * `query` null: the filters are not known yet (a search still loading decides them), and the
 * links are shown disabled, with no address to follow.
 */
export function DownloadLinks({ path, query }: { path: string; query: RequestOptions['query'] | null }) {
  return (
    <>
      {(['csv', 'ndjson'] as const).map((format) =>
        query === null ? (
          <a key={format} class="button button--small" aria-disabled="true">
            Download {format.toUpperCase()}
          </a>
        ) : (
          <a key={format} class="button button--small" href={apiUrl(path, { ...query, format }).href} download>
            Download {format.toUpperCase()}
          </a>
        ),
      )}
    </>
  )
}
