/**
 * The site's own list that decided a verification, instead of the risk model: its address
 * allowlist (allowed at score 0, unjudged) or its blocklist of addresses and countries (blocked at
 * 100). The log keeps it (migration 030), so that a label on such a verification says something
 * about the list, not about the model: the stats' feedback figures count it apart.
 */
export const LIST_DECISIONS = ['allowlist', 'blocklist'] as const
export type ListDecision = (typeof LIST_DECISIONS)[number]
