package record

import (
	"strings"
	"testing"
)

// TestWebhookURLsMasked (outsider22): a webhook URL's secret path is
// masked wherever text puts it, its host and head kept; the same URL
// with its slashes escaped as JSON text or a query writes them, in upper
// case, after a scheme or a subdomain; and a second Scrub changes nothing.
func TestWebhookURLsMasked(t *testing.T) {
	r := NewRedactorKey([]byte("webhook"))
	const (
		slack   = "T0AB12CD3/B0XY9Z8W7/AbCdEfGhIjKlMnOpQrStUvWx"
		discord = "1234567890123456789/AbCdEf_GhIjKlMn-OpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWxYz01234"
	)
	for _, c := range []struct {
		in, keep, secret string
	}{
		{"https://hooks.slack.com/services/" + slack, "https://hooks.slack.com/services/", slack},
		{"posted to https://hooks.slack.com/services/" + slack + " at 12:00", "https://hooks.slack.com/services/", slack},
		{`{"url":"https://hooks.slack.com/workflows/` + slack + `"}`, "https://hooks.slack.com/workflows/", slack},
		{"hooks.slack.com/triggers/" + slack, "hooks.slack.com/triggers/", slack},
		{"HTTPS://HOOKS.SLACK.COM/SERVICES/" + slack, "HTTPS://HOOKS.SLACK.COM/SERVICES/", slack},
		{`{"url":"https:\/\/hooks.slack.com\/services\/` + strings.ReplaceAll(slack, "/", `\/`) + `"}`,
			`https:\/\/hooks.slack.com\/services\/`, strings.ReplaceAll(slack, "/", `\/`)},
		{"redirect=https%3A%2F%2Fhooks.slack.com%2Fservices%2F" + strings.ReplaceAll(slack, "/", "%2F") + "&x=1",
			"hooks.slack.com%2Fservices%2F", strings.ReplaceAll(slack, "/", "%2F")},
		{"https://discord.com/api/webhooks/" + discord, "https://discord.com/api/webhooks/", discord},
		{"https://discordapp.com/api/webhooks/" + discord + "?wait=true", "https://discordapp.com/api/webhooks/", discord},
		{"https://ptb.discord.com/api/v10/webhooks/" + discord, "https://ptb.discord.com/api/v10/webhooks/", discord},
		{"env SLACK_URL=https://hooks.slack.com/services/" + slack + "\n", "https://hooks.slack.com/services/", slack},
	} {
		got := r.Scrub(c.in)
		if strings.Contains(got, c.secret) || !strings.Contains(got, c.keep+r.Mask(c.secret)) {
			t.Errorf("Scrub(%q) = %q, want %q and the mask of %q", c.in, got, c.keep, c.secret)
		}
		if again := r.Scrub(got); again != got {
			t.Errorf("a second Scrub changed %q to %q", got, again)
		}
	}
}

// TestWebhookURLNearMisses: a webhook host with no secret path after it,
// documentation's placeholders, and other URLs on those hosts stay as
// they are.
func TestWebhookURLNearMisses(t *testing.T) {
	r := NewRedactorKey([]byte("webhook"))
	for _, s := range []string{
		"https://hooks.slack.com/services/",
		"https://hooks.slack.com/services/T000/B000/XXXX",
		"https://hooks.slack.com/services/…",
		"see https://api.slack.com/messaging/webhooks for how to create one",
		"https://discord.com/api/webhooks/{webhook.id}/{webhook.token}",
		"https://discord.com/developers/docs/resources/webhook",
		"GET /api/webhooks/list returns the configured webhooks",
		"myhooks.slack.com/services/T0AB12CD3/B0XY9Z8W7/AbCdEfGhIjKlMnOpQrStUvWx",
	} {
		if got := r.Scrub(s); got != s {
			t.Errorf("Scrub(%q) = %q, want it unchanged", s, got)
		}
	}
}

// TestWebhookHintsInProviderHints: webhookHints are providerHints' last
// three, the hints the gate opens on for a webhook URL.
func TestWebhookHintsInProviderHints(t *testing.T) {
	want := []string{"hooks.slack.com", "/webhooks", "%2fwebhooks"}
	if strings.Join(webhookHints, " ") != strings.Join(want, " ") {
		t.Errorf("webhookHints = %q, want %q", webhookHints, want)
	}
	if patternsMayApply("see https://x/T0/B0/abc", ctxJSON) {
		t.Fatal("the gate opens on the text without a hint: the check below proves nothing")
	}
	for _, h := range webhookHints {
		if !patternsMayApply("see https://x"+strings.ToUpper(h)+"/T0/B0/abc", ctxJSON) {
			t.Errorf("the gate stays shut on %q", h)
		}
	}
}
