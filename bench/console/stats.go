package console

import (
	"slices"
	"time"

	"kubevirt.dev/virt/bench/load"
)

// Target is how much slower than the node's socket the console may echo a
// keystroke through the aggregator, at p50.
const Target = 5 * time.Millisecond

// Paths of a keystroke.
const (
	// Direct is root on the node, connected to QEMU's serial socket.
	Direct = "node: QEMU's serial socket"
	// Aggregator is the console subresource through the kube-apiserver.
	Aggregator = "console subresource through the aggregator"
)

// Row is the echo latencies of one path.
type Row struct {
	Path               string
	Keystrokes         int
	Min, P50, P99, Max time.Duration
	// Noisy counts keystrokes whose reply held bytes besides the echo
	// (kernel messages, redraws). Their time is the echo's unless what
	// came before it held the key's letter, which was then taken for it:
	// a count above zero is to be looked at.
	Noisy int
}

// Result is what the part measured.
type Result struct {
	// VMI is namespace/name of the guest measured.
	VMI string
	// Keystrokes per path, sent in Blocks blocks per path.
	Keystrokes, Blocks int
	Rows               []Row
	Notes              []string `json:",omitempty"`
}

// Row returns the row of path.
func (r *Result) Row(path string) (Row, bool) {
	for _, x := range r.Rows {
		if x.Path == path {
			return x, true
		}
	}
	return Row{}, false
}

// Overhead is the aggregator's p50 minus the socket's; ok is false unless
// both were measured.
func (r *Result) Overhead() (d time.Duration, ok bool) {
	a, okA := r.Row(Aggregator)
	s, okS := r.Row(Direct)
	if !okA || !okS || a.Keystrokes == 0 || s.Keystrokes == 0 {
		return 0, false
	}
	return a.P50 - s.P50, true
}

// summarize is the row of one path's latencies (nearest-rank quantiles,
// as the other parts use).
func summarize(path string, lat []time.Duration, noisy int) Row {
	s := slices.Clone(lat)
	slices.Sort(s)
	r := Row{Path: path, Keystrokes: len(s), Noisy: noisy}
	if len(s) == 0 {
		return r
	}
	r.Min, r.Max = s[0], s[len(s)-1]
	r.P50, r.P99 = load.Quantile(s, 0.5), load.Quantile(s, 0.99)
	return r
}

// blocks splits n keystrokes into k blocks as evenly as possible.
func blocks(n, k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = n / k
		if i < n%k {
			out[i]++
		}
	}
	return out
}
