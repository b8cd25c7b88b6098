package recorder

import "testing"

func TestBodyModeLimit(t *testing.T) {
	for _, tt := range []struct {
		mode  BodyMode
		limit int
		want  int
	}{
		{BodiesErrors, 0, DefaultBodyLimit},
		{BodiesNone, 0, DefaultBodyLimit},
		{BodiesAll, 0, DefaultBodyLimit},
		{BodiesFull, 0, DefaultFullBodyLimit},
		{BodiesAll, 7, 7},
		{BodiesFull, 7, 7},
	} {
		if got := tt.mode.Limit(tt.limit); got != tt.want {
			t.Errorf("%q.Limit(%d) = %d, want %d", tt.mode, tt.limit, got, tt.want)
		}
	}
}
