package record

// Webhook URLs: a URL whose path is the credential. Whoever holds a Slack
// incoming webhook's URL (or a workflow's or trigger's) can post to its
// channel, and a Discord webhook's URL carries its token; neither has a
// name beside it nor a prefix a provider key has (outsider22: a Slack
// webhook URL returned by a tool was in `call`'s output, the record, the
// HAR and a matrix client's stderr, where every other planted secret was
// masked). The host and the path's head stay readable, as a URL's
// userinfo does (maskUserinfo); what follows the head is masked:
//
//	hooks.slack.com/services/T…/B…/…       → hooks.slack.com/services/[redacted:…]
//	discord.com/api/webhooks/123…/AbC…     → discord.com/api/webhooks/[redacted:…]
//
// The head is matched in any case (a host is), after a byte that is not a
// letter, digit or "_" (so ptb.discord.com and a scheme before it count),
// with each "/" written as "/", "\/" (JSON text that escapes slashes) or
// "%2F" (a URL inside a query). The masked part is the run after the
// head of letters, digits, "_", "-", "+" and those separators, at least
// webhookMinBody bytes of it not separators: a head with no path after
// it, or "…" in documentation, stays as it is.

// webhookHeads are the heads after which a path is a webhook's secret;
// "#" stands for one or more digits (Discord's versioned API, "v10").
var webhookHeads = []string{
	"hooks.slack.com/services/", "hooks.slack.com/workflows/", "hooks.slack.com/triggers/",
	"discord.com/api/webhooks/", "discord.com/api/v#/webhooks/",
	"discordapp.com/api/webhooks/", "discordapp.com/api/v#/webhooks/",
}

// webhookHints, lower-cased, are in providerHints: under them
// scrubPatterns looks for webhook URLs too (and the gate opens). "/webhooks" is in the escaped
// form ("\/webhooks") as well.
var webhookHints = providerHints[len(providerHints)-3:]

// webhookMinBody is the fewest secret bytes (not separators) a webhook
// path must hold to be masked: Slack's are 44 or more, Discord's 80 or so.
const webhookMinBody = 20

// maskWebhookURLs masks the secret path of every webhook URL in s.
func (r *Redactor) maskWebhookURLs(s string) string { return r.maskFound(s, webhookPathAt) }

// webhookPathAt returns the secret path of the webhook URL whose head
// starts at s[i].
func webhookPathAt(s string, i int) (start, end int, ok bool) {
	if c := lowerASCII(s[i]); c != 'h' && c != 'd' || !keyStart(s, i) {
		return 0, 0, false
	}
	for _, head := range webhookHeads {
		if at := matchWebhookHead(s, i, head); at >= 0 {
			if end := webhookBodyEnd(s, at); end >= 0 {
				return at, end, true
			}
		}
	}
	return 0, 0, false
}

// matchWebhookHead returns the index in s after head matched at i (see
// webhookHeads for its "#" and the package comment for its "/"), or -1.
func matchWebhookHead(s string, i int, head string) int {
	for j := 0; j < len(head); j++ {
		switch head[j] {
		case '/':
			n := separatorLen(s, i)
			if n == 0 {
				return -1
			}
			i += n
		case '#':
			k := i
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			if k == i {
				return -1
			}
			i = k
		default:
			if i >= len(s) || lowerASCII(s[i]) != head[j] {
				return -1
			}
			i++
		}
	}
	return i
}

// separatorLen returns the length of the path separator at s[i]: "/",
// "\/" or "%2F" (either case); 0 when there is none.
func separatorLen(s string, i int) int {
	switch {
	case i < len(s) && s[i] == '/':
		return 1
	case i+1 < len(s) && s[i] == '\\' && s[i+1] == '/':
		return 2
	case i+2 < len(s) && s[i] == '%' && s[i+1] == '2' && s[i+2]|0x20 == 'f':
		return 3
	}
	return 0
}

// webhookBodyEnd returns the end of the webhook path that starts at s[at],
// or -1 when it holds fewer than webhookMinBody secret bytes.
func webhookBodyEnd(s string, at int) int {
	i, body := at, 0
	for i < len(s) {
		if n := separatorLen(s, i); n > 0 {
			i += n
			continue
		}
		if c := s[i]; isKeyByte(c) || c == '+' {
			i++
			body++
			continue
		}
		break
	}
	if body < webhookMinBody {
		return -1
	}
	return i
}
