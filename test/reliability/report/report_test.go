package report

import (
	"strings"
	"testing"
	"time"
)

func TestBounds(t *testing.T) {
	tests := []struct {
		r         Result
		wantPass  bool
		wantFails bool
	}{
		{Count("lost", 0, MustBe(0)), true, false},
		{Count("lost", 1, MustBe(0)), false, true},
		{Percent("failed", 0.005, TargetBelow(1, "%")), true, false},
		{Percent("failed", 0.4, TargetBelow(1, "%")), false, true},
		{Percent("failed", 0.4, TargetBelow(1, "%")).Because("one replica"), false, false},
		{Seconds("failover", 14900*time.Millisecond, TargetBelow(15, "s")), true, false},
		{Seconds("failover", 15*time.Second, TargetBelow(15, "s")), false, true},
		{Seconds("back", 90*time.Second, MustBeAtMost(90, "s")), true, false},
		{Count("guests running at the kill", 2, MustBeAtLeast(1)), true, false},
		{Count("guests running at the kill", 0, MustBeAtLeast(1)), false, true},
		{Text("reason", "LauncherGone", MustEqual("LauncherGone")), true, false},
		{Text("reason", "GuestCrashed", MustEqual("LauncherGone")), false, true},
		{Seconds("downtime", time.Hour, Measured()), true, false},
	}
	for _, tt := range tests {
		if tt.r.Pass != tt.wantPass || tt.r.Fails() != tt.wantFails {
			t.Errorf("%s = %s %s (%s): pass %v fails %v, want %v %v", tt.r.Name, tt.r.Value, tt.r.Unit, tt.r.Bound.Text,
				tt.r.Pass, tt.r.Fails(), tt.wantPass, tt.wantFails)
		}
	}
}

// TestWrite: figures come out in the book's order whatever order they were
// filed in, each result in the summary and in its section, with its
// verdict and a missed target's argument.
func TestWrite(t *testing.T) {
	b := NewBook("first", "second")
	b.file(&Figure{ID: "extra", Title: "Extra"})
	b.file(&Figure{ID: "second", Title: "Second fault", Fault: "SIGKILL of b.", Results: []Result{
		Percent("failed share", 0.43, TargetBelow(1, "%")).Because("a single replica restarts"),
	}, Took: 3 * time.Second})
	b.file(&Figure{ID: "first", Title: "First fault", Load: "8 clients.", Results: []Result{
		Count("acknowledged writes lost", 0, MustBe(0)),
		Seconds("downtime", 2500*time.Millisecond, Measured()),
		Text("reason", "a|b", MustEqual("c")),
	}, Notes: []string{"crash backoff"}, Failed: true})
	var out strings.Builder
	if err := b.Write(&out, Header{Title: "Reliability", Intro: "Intro.", Env: Environment{CPUs: 2, Commit: "abc"},
		Sections: []string{"## How\n\nDefinitions."}}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"# Reliability\n", "| commit | abc |", "## How\n\nDefinitions.",
		"| First fault | acknowledged writes lost | 0 | must be 0 | pass |",
		"| First fault | downtime | 2.5 s | measured |  |",
		`| First fault | reason | a\|b | must be c | **FAIL** |`,
		"| First fault | **the test failed** (see its section) | | | FAIL |",
		"| Second fault | failed share | 43.00 % | target < 1 % | missed (argued below) |",
		"**Load.** 8 clients.", "**Fault.** SIGKILL of b.",
		"- failed share misses its target: a single replica restarts",
		"- crash backoff", "The test took 3s.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	first, second, extra := strings.Index(got, "## First fault"), strings.Index(got, "## Second fault"), strings.Index(got, "## Extra")
	if first < 0 || !(first < second && second < extra) {
		t.Errorf("sections at %d, %d, %d, want in the book's order, then the rest", first, second, extra)
	}
}
