import { Link } from '../components/link.js'
import { PageHeading } from '../components/page-heading.js'

export function NotFoundPage() {
  return (
    <>
      <PageHeading title="Page not found" />
      <p>
        There is nothing at this address. <Link to={{ name: 'sites' }}>Go to your sites</Link>.
      </p>
    </>
  )
}
