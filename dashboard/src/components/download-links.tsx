import { apiUrl, type RequestOptions } from '../api/client.js'

/**
 * Links that download a log's export with the filters shown (`path` is the export's, under
 * /api/v1). A plain GET: the browser sends the session cookie, and the server names the file.
 */
export function DownloadLinks({ path, query }: { path: string; query: RequestOptions['query'] }) {
  return (
    <>
      {(['csv', 'ndjson'] as const).map((format) => (
        <a key={format} class="button button--small" href={apiUrl(path, { ...query, format }).href} download>
          Download {format.toUpperCase()}
        </a>
      ))}
    </>
  )
}
