package expectation

import (
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestExpectations(t *testing.T) {
	const key = "ns/vmi"
	tests := []struct {
		name      string
		do        func(e *Expectations, c *clocktesting.FakeClock)
		satisfied bool
	}{
		{name: "nothing recorded", do: func(*Expectations, *clocktesting.FakeClock) {}, satisfied: true},
		{name: "creation pending", do: func(e *Expectations, _ *clocktesting.FakeClock) {
			e.ExpectCreations(key, 1)
		}, satisfied: false},
		{name: "creation observed", do: func(e *Expectations, _ *clocktesting.FakeClock) {
			e.ExpectCreations(key, 1)
			e.CreationObserved(key)
		}, satisfied: true},
		{name: "one of two creations observed", do: func(e *Expectations, _ *clocktesting.FakeClock) {
			e.ExpectCreations(key, 2)
			e.CreationObserved(key)
		}, satisfied: false},
		{name: "observation before expectation does not go negative", do: func(e *Expectations, _ *clocktesting.FakeClock) {
			e.CreationObserved(key)
			e.ExpectCreations(key, 1)
		}, satisfied: false},
		{name: "deletion pending", do: func(e *Expectations, _ *clocktesting.FakeClock) {
			e.ExpectDeletions(key, "a", "b")
			e.DeletionObserved(key, "a")
		}, satisfied: false},
		{name: "deletions observed, twice for one", do: func(e *Expectations, _ *clocktesting.FakeClock) {
			e.ExpectDeletions(key, "a", "b")
			e.DeletionObserved(key, "a")
			e.DeletionObserved(key, "a")
			e.DeletionObserved(key, "b")
		}, satisfied: true},
		{name: "pending expectation expires", do: func(e *Expectations, c *clocktesting.FakeClock) {
			e.ExpectCreations(key, 1)
			c.Step(time.Minute)
		}, satisfied: true},
		{name: "forgotten", do: func(e *Expectations, _ *clocktesting.FakeClock) {
			e.ExpectCreations(key, 1)
			e.Forget(key)
		}, satisfied: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := clocktesting.NewFakeClock(time.Unix(1000, 0))
			e := New(time.Minute, c)
			tt.do(e, c)
			if got := e.Satisfied(key); got != tt.satisfied {
				t.Errorf("Satisfied() = %v, want %v", got, tt.satisfied)
			}
			if other := e.Satisfied("ns/other"); !other {
				t.Errorf("an unrelated key is not satisfied")
			}
		})
	}
}

func TestRemaining(t *testing.T) {
	c := clocktesting.NewFakeClock(time.Unix(1000, 0))
	e := New(time.Minute, c)
	e.ExpectCreations("k", 1)
	c.Step(20 * time.Second)
	if got := e.Remaining("k"); got != 40*time.Second {
		t.Errorf("Remaining() = %v, want 40s", got)
	}
	e.CreationObserved("k")
	if got := e.Remaining("k"); got != 0 {
		t.Errorf("Remaining() after observation = %v, want 0", got)
	}
}
