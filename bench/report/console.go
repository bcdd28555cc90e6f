package report

import (
	"fmt"
	"strings"
	"time"

	"kubevirt.dev/virt/bench/console"
	"kubevirt.dev/virt/bench/startup"
)

// msFine is milliseconds with the precision a keystroke's echo needs.
func msFine(d time.Duration) string {
	return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond))
}

func consoleVerdicts(r *Results) []Verdict {
	v := Verdict{Target: fmt.Sprintf("console keystroke echo through the aggregator within %s of the node's serial socket at p50", msFine(console.Target)+" ms")}
	c := r.Console
	d, ok := time.Duration(0), false
	if c != nil {
		d, ok = c.Overhead()
	}
	if !ok {
		v.Measured, v.Met = "—", "not measured"
		return []Verdict{v}
	}
	a, _ := c.Row(console.Aggregator)
	s, _ := c.Row(console.Direct)
	v.Measured = fmt.Sprintf("%+.2f ms (p50 %s ms against %s ms)", float64(d)/float64(time.Millisecond), msFine(a.P50), msFine(s.P50))
	v.Met = yesNo(d <= console.Target)
	return []Verdict{v}
}

func writeConsole(w func(string, ...any), r *Results) {
	c := r.Console
	w("## 5. Console keystroke echo: the aggregator against the node's socket\n\n")
	if c == nil {
		w("Not measured in this run.\n\n")
		return
	}
	w("The VMI of `artifacts/examples/vmi-tiny.yaml` (the test guest, 128 MiB, TCG) as `%s`, once `Running` and its guest printed `%s`. One lower-case letter at a time goes to the interactive busybox shell on the guest's ttyS0 and is timed from the write until the shell's echo of that letter comes back; the next letter is sent only then. The letters are those the shell's prompt does not contain; every %d letters the line is cleared (Ctrl-U) and the console left silent for %d ms before the next letter is timed, so the line editor never wraps or redraws during one. **Node**: as root on the node, a connection to QEMU's serial chardev socket in the launcher pod's private emptyDir (`node/podfs`, the dial virt-handler uses). **Aggregator**: the console subresource over WebSocket as `virtctl console` opens it (`virtctl/stream.Dial`, the admin kubeconfig): kube-apiserver's aggregator, virt-apiserver, virt-handler, the same socket. %d keystrokes per path in %d blocks alternating between the paths (the first path changes every block), each block on a new connection with %d untimed keystrokes first: QEMU's socket serves one client at a time. Both paths are read by a goroutine in the same way. Both include the guest's own time to take the byte and echo it (a TCG guest: the UART's interrupt, the tty, the shell's line editor, the UART again), most of the node's row: the difference is what the way through the aggregator, virt-apiserver and virt-handler adds. The last column counts keystrokes whose reply held more than the echo (a kernel message, a redraw); with 0 every echo came alone.\n\n",
		c.VMI, startup.Marker, console.LineLength, console.Quiet.Milliseconds(), c.Keystrokes, c.Blocks, console.Warmup)
	w("| path | keystrokes | min ms | p50 ms | p99 ms | max ms | replies with other bytes too |\n|---|---|---|---|---|---|---|\n")
	for _, x := range c.Rows {
		w("| %s | %d | %s | %s | %s | %s | %d |\n", x.Path, x.Keystrokes, msFine(x.Min), msFine(x.P50), msFine(x.P99), msFine(x.Max), x.Noisy)
	}
	if d, ok := c.Overhead(); ok {
		a, _ := c.Row(console.Aggregator)
		s, _ := c.Row(console.Direct)
		w("\nThrough the aggregator: **%+.2f ms at p50** (target: within %s ms of the socket), %+.2f ms at p99.\n",
			float64(d)/float64(time.Millisecond), msFine(console.Target), float64(a.P99-s.P99)/float64(time.Millisecond))
	}
	w("\n")
	for _, n := range c.Notes {
		w("- %s\n", n)
	}
	if len(c.Notes) > 0 {
		w("\n")
	}
}

// mergedRuns says which parts later runs measured (virt-bench --merge).
func mergedRuns(w func(string, ...any), r *Results) {
	for _, m := range r.Merged {
		w("Except part %s: measured on %s by a run of its own that took %s (load average at its start %s; options `%s`) and merged into these results (`--merge`); its numbers compare with each other.\n",
			"`"+strings.Join(m.Parts, "`, `")+"`", m.Started.UTC().Format("2006-01-02 15:04 MST"), m.Elapsed.Round(time.Second), m.LoadAverage, m.Flags)
	}
}
