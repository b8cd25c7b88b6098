package metrics_test

import (
	"bytes"
	"testing"

	"github.com/mcpdiag/mcpdiag/record"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

func recordFor(method, tool string) *record.Record {
	return &record.Record{Kind: record.KindExchange, Method: method, Tool: tool, Outcome: "TOOL_SUCCESS", Layer: "application"}
}

func gather(t *testing.T, g prometheus.Gatherer) string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}
