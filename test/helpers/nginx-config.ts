/** An nginx.conf for a test: nginx run as this user, its files in `directory`, around the `http` blocks given. */
export function nginxConfig(directory: string, httpBlocks: string): string {
  const temporary = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `${name}_temp_path ${directory}/${name};`).join('\n  ')
  return `${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
pid ${directory}/nginx.pid;
error_log ${directory}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  ${temporary}
  ${httpBlocks}
}
`
}
