import { describe, expect, it } from 'vitest'
import { helpLinkTemplateOf } from '../../src/routes/gate/help-link.js'

/** The link gate.js shows a visitor turned away with `reference`. */
const linkFor = (url: string, reference: string) => helpLinkTemplateOf(url).replace('{reference}', encodeURIComponent(reference))

describe("the gate's help link for blocked visitors", () => {
  it("appends the reference as ref to an https URL, after the URL's own query and before its fragment", () => {
    expect(linkFor('https://help.example.com/', 'vr_1')).toBe('https://help.example.com/?ref=vr_1')
    expect(linkFor('https://help.example.com/contact?topic=gate%20help&lang=de', 'vr_1')).toBe('https://help.example.com/contact?topic=gate%20help&lang=de&ref=vr_1')
    expect(linkFor('https://help.example.com/contact?#form', 'vr 1')).toBe('https://help.example.com/contact?ref=vr%201#form')
  })

  it('puts the reference in the body of a mailto: address, beside its other fields and after a body it has', () => {
    expect(linkFor('mailto:help@example.com', 'vr_1')).toBe('mailto:help@example.com?body=Reference:%20vr_1')
    expect(linkFor('mailto:help@example.com?subject=Blocked', 'vr_1')).toBe('mailto:help@example.com?subject=Blocked&body=Reference:%20vr_1')
    expect(linkFor('mailto:help@example.com?body=Hello&cc=ops@example.com', 'vr_1')).toBe('mailto:help@example.com?body=Hello%0A%0AReference:%20vr_1&cc=ops@example.com')
  })
})
