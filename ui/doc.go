// Package ui is mcpdiag's page over diagnostic records (docs/ui.md): a
// network-panel style table with one row per record, exchanges grouped
// under their call, a detail pane (headers, bodies as recorded, the SSE
// events on a timeline with the terminal one marked and the cut shown,
// warnings with their spec rules, the retry decision, the fault with its
// seed), filters, keyboard navigation, and charts of the outcomes by layer
// over time, latency by outcome and the worst tools.
//
// The page is one HTML document whose JavaScript module and style sheet are
// embedded in the binary (go:embed) and inlined into the page, allowed by
// their hashes in the page's Content-Security-Policy: no build step, no CDN,
// nothing fetched at run time. It comes in two forms:
//
//   - static (HTMLWriter, behind `mcpdiag report --html`): the records are
//     embedded in the page as data; the policy forbids every fetch, so the
//     file works from a CI artifact store;
//   - live (Server, behind `mcpdiag ui`): the page is served on loopback
//     under an unguessable token and receives the records as server-sent
//     events, from record files as they grow (Tail) or from a producer
//     (Publish).
package ui
