package load

import (
	"reflect"
	"testing"
	"time"
)

// TestSplitFailures: the window explains only failures from the fault on.
// A failure before the fault is never the window's (the split used to put
// every failure that started before the window closed in it, so a storm
// failing from its start was argued away as the fault's), and neither is
// the 404 that follows a create failed before the fault.
func TestSplitFailures(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	fault, closed := at(10), at(11)
	req := func(verb Verb, object string, start, end float64, code int) Request {
		r := Request{Verb: verb, Object: object, Start: at(start), End: at(end), Code: code}
		if code != 0 {
			r.Err = "failed"
		}
		return r
	}
	tests := []struct {
		name     string
		requests []Request
		want     Split
		// explained: the window explains every failure.
		explained bool
	}{
		{
			name: "failures in the window only",
			requests: []Request{
				req(Update, "a", 9, 9.5, 0),
				req(Create, "b", 9.9, 10.1, 503), // in flight at the kill
				req(Update, "c", 10.2, 10.3, 503),
				req(Update, "d", 10.4, 10.5, 0),
				req(Update, "b", 12, 12.1, 404), // b's create failed in the window
			},
			want:      Split{Window: 2, FollowOn: 1, OKInWindow: 1, FailedInWindow: 2},
			explained: true,
		},
		{
			name: "a failure before the fault is not the window's",
			requests: []Request{
				req(Update, "a", 2, 2.1, 503),
				req(Create, "b", 10.2, 10.3, 503),
			},
			want: Split{Before: 1, Window: 1, FailedInWindow: 1},
		},
		{
			name: "nor the 404 that follows a create failed before it",
			requests: []Request{
				req(Create, "a", 2, 2.1, 503),
				req(Update, "a", 12, 12.1, 404),
			},
			want: Split{Before: 1, Unexplained: 1},
		},
		{
			name: "a failure after the window is unexplained",
			requests: []Request{
				req(Update, "a", 11.5, 11.6, 503),
				req(Delete, "b", 20, 20.1, 404),
			},
			want: Split{Unexplained: 2},
		},
		{
			name:      "no failure",
			requests:  []Request{req(Create, "a", 1, 1.1, 0), req(Update, "a", 10.5, 10.6, 0)},
			want:      Split{OKInWindow: 1},
			explained: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SplitFailures(&Record{Began: t0, Ended: at(30), Requests: tt.requests}, fault, closed)
			got.Examples = nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("split %+v, want %+v", got, tt.want)
			}
			if got.Explained() != tt.explained {
				t.Errorf("explained %v, want %v", got.Explained(), tt.explained)
			}
		})
	}
}
