package load_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"kubevirt.dev/virt/bench/load"
)

func TestRunStopsAtMaxCalls(t *testing.T) {
	r := load.Run(t.Context(), 4, 0, 100, func(context.Context, int) error { return nil })
	if r.OK != 100 || r.Errors != 0 {
		t.Fatalf("ok %d errors %d, want 100 and 0", r.OK, r.Errors)
	}
}

func TestRunStopsAtDurationAndCountsErrors(t *testing.T) {
	boom := errors.New("boom")
	start := time.Now()
	r := load.Run(t.Context(), 2, 50*time.Millisecond, 0, func(_ context.Context, i int) error {
		time.Sleep(time.Millisecond)
		if i%2 == 0 {
			return boom
		}
		return nil
	})
	if since := time.Since(start); since > time.Second {
		t.Fatalf("ran %s", since)
	}
	if r.OK == 0 || r.Errors == 0 || !errors.Is(r.FirstError, boom) {
		t.Fatalf("ok %d errors %d first %v", r.OK, r.Errors, r.FirstError)
	}
}

func TestQuantile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 50}, {0.99, 99}, {0.95, 95}, {1, 100}, {0, 1}} {
		if got := load.Quantile(d, tc.q); got != tc.want {
			t.Errorf("Quantile(%v) = %d, want %d", tc.q, got, tc.want)
		}
	}
}
