// Package retry decides what an MCP client does after each response to a
// call: use it, retry it, fix something and re-send it, continue it, or give
// up, and says why in one sentence.
//
// It reads the verdict of package classify ([classify.Result]) together with
// the facts that the response cannot show ([Facts]): how many retries and
// recoveries were already made, whether the tool is safe to run twice
// ([Safety]), the protocol revision, whether a 2025-11-25 session was held,
// and a random source for the jitter. [Policy.Decide] returns a [Decision]:
// an [Action] with a stable name, a delay, and a reason.
//
// The central rule: a call is retried after its request may have reached the
// server only when running it twice does no harm (read-only, idempotent, or
// carrying an idempotency key). For any other call the decision is Fail, and
// the reason says that it is unknown whether the tool ran. A request that
// never left the client, and one the server turned away before acting on it
// (401, 403 step-up, 429, -32022, -32020, a 2025-11-25 session 404), may be
// re-sent whatever the tool.
//
// A loop of calls looks like this (send stands for the client's transport):
//
//	p := retry.DefaultPolicy() // once per run: it holds the shared budget
//	f := retry.Facts{Safety: retry.Unknown, Rand: rand.New(rand.NewPCG(1, 2))}
//	for {
//		res := send(f)
//		d := p.Decide(res, f)
//		if d.Action.Final() {
//			return res, d // done, surface-to-model, poll-task or fail
//		}
//		time.Sleep(d.Delay)
//		f.Count(d) // then reauthorize, renegotiate, … before the next send
//	}
//
// Decide never sleeps and keeps no state except the policy's [Budget], a
// token bucket that keeps a loop of calls from retrying more than a set share
// of its requests. Delays come from [Backoff] (full jitter) or the server's
// Retry-After, so with a seeded [Rand] they are exactly reproducible.
//
// docs/retry.md has the decision table, the defaults with their flags on
// `mcpdiag call`, and the sources behind each rule.
package retry
