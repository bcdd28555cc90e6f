package report

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Kind is how binding a bound is.
type Kind int

const (
	// None: measured and reported.
	None Kind = iota
	// Must: missing it fails the test.
	Must
	// Target: missing it fails the test unless the result argues why not.
	Target
)

// Bound is what a result is held to.
type Bound struct {
	Kind Kind
	// Text says it in the report: "must be 0", "target < 15 s".
	Text  string
	holds func(Result) bool
}

// Measured is no bound: the result is reported as it is.
func Measured() Bound { return Bound{Kind: None, Text: "measured"} }

// MustBe holds a number to exactly n.
func MustBe(n float64) Bound {
	return Bound{Kind: Must, Text: "must be " + number(n), holds: func(r Result) bool { return r.isNum && r.num == n }}
}

// MustBeAtLeast holds a number to at least n: that a check could see
// anything ("guests running at the kill" before "guests lost").
func MustBeAtLeast(n float64) Bound {
	return Bound{Kind: Must, Text: "must be ≥ " + number(n), holds: func(r Result) bool { return r.isNum && r.num >= n }}
}

// MustBeAtMost holds a number, in unit, to at most x.
func MustBeAtMost(x float64, unit string) Bound {
	return Bound{Kind: Must, Text: "must be ≤ " + withUnit(number(x), unit), holds: func(r Result) bool { return r.isNum && r.num <= x }}
}

// MustEqual holds a text to exactly want.
func MustEqual(want string) Bound {
	return Bound{Kind: Must, Text: "must be " + want, holds: func(r Result) bool { return !r.isNum && r.Value == want }}
}

// TargetBelow aims a number, in unit, below x.
func TargetBelow(x float64, unit string) Bound {
	return Bound{Kind: Target, Text: "target < " + withUnit(number(x), unit), holds: func(r Result) bool { return r.isNum && r.num < x }}
}

// Result is one figure of a fault.
type Result struct {
	Name string
	// Value is the result as the report prints it, without its unit.
	Value string
	Unit  string
	Bound Bound
	// Pass: the bound holds (always, for Measured).
	Pass bool
	// Argument says why a missed target does not fail the test; empty, it
	// does.
	Argument string

	num   float64
	isNum bool
}

// Count is a number of things.
func Count(name string, n int, b Bound) Result {
	return judge(Result{Name: name, Value: strconv.Itoa(n), Bound: b, num: float64(n), isNum: true})
}

// Seconds is a duration, printed in seconds to a tenth.
func Seconds(name string, d time.Duration, b Bound) Result {
	s := d.Seconds()
	return judge(Result{Name: name, Value: strconv.FormatFloat(s, 'f', 1, 64), Unit: "s", Bound: b, num: s, isNum: true})
}

// Percent is a share (0.25 is 25 %), printed to a hundredth of a percent.
func Percent(name string, share float64, b Bound) Result {
	p := share * 100
	return judge(Result{Name: name, Value: strconv.FormatFloat(p, 'f', 2, 64), Unit: "%", Bound: b, num: p, isNum: true})
}

// Text is a word or phrase: a reason, a phase.
func Text(name, value string, b Bound) Result {
	return judge(Result{Name: name, Value: value, Bound: b})
}

// Because is the result with the argument why missing its target does not
// fail the test.
func (r Result) Because(argument string) Result {
	r.Argument = argument
	return r
}

// Fails reports whether the result fails its test.
func (r Result) Fails() bool {
	switch r.Bound.Kind {
	case Must:
		return !r.Pass
	case Target:
		return !r.Pass && r.Argument == ""
	}
	return false
}

func judge(r Result) Result {
	r.Pass = r.Bound.holds == nil || r.Bound.holds(r)
	return r
}

// Figure is one fault's entry in the report.
type Figure struct {
	// ID orders the figure in the book.
	ID    string
	Title string
	// Fault, Load and Method (markdown) say what was done, what ran
	// meanwhile, and how the results are measured.
	Fault, Load, Method string
	Results             []Result
	Notes               []string
	// Took is how long its test ran; Failed, whether it failed (its
	// results may then be partial).
	Took   time.Duration
	Failed bool

	t  *testing.T
	mu sync.Mutex
}

// Add adds results and fails the test for each that fails its bound.
func (f *Figure) Add(results ...Result) {
	f.t.Helper()
	f.mu.Lock()
	f.Results = append(f.Results, results...)
	f.mu.Unlock()
	for _, r := range results {
		if r.Fails() {
			f.t.Errorf("%s: %s = %s, %s", f.Title, r.Name, withUnit(r.Value, r.Unit), r.Bound.Text)
		} else {
			f.t.Logf("%s: %s = %s (%s)", f.Title, r.Name, withUnit(r.Value, r.Unit), r.Bound.Text)
		}
	}
}

// Note adds a line the report prints under the results.
func (f *Figure) Note(format string, args ...any) {
	f.t.Helper()
	line := fmt.Sprintf(format, args...)
	f.mu.Lock()
	f.Notes = append(f.Notes, line)
	f.mu.Unlock()
	f.t.Log(line)
}

func number(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

func withUnit(v, unit string) string {
	if unit == "" {
		return v
	}
	return v + " " + unit
}
