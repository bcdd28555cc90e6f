package report

import (
	"fmt"
	"strings"
	"time"

	"gonum.org/v1/plot"

	"kubevirt.dev/virt/bench/network"
)

func networkVerdicts(r *Results) []Verdict {
	v := Verdict{Target: fmt.Sprintf("guest download throughput through masquerade >= %.1fx a plain tap under raw libvirt (%d MiB over HTTP, median)", network.Target, network.FileMiB)}
	n := r.Network
	x, ok := 0.0, false
	if n != nil {
		x, ok = n.Ratio()
	}
	if !ok {
		v.Measured, v.Met = "—", "not measured"
		return []Verdict{v}
	}
	p, _ := n.Row(network.Platform)
	q, _ := n.Row(network.Raw)
	v.Measured = fmt.Sprintf("%.2fx (%.0f MB/s against %.0f MB/s)", x, p.MedianMBps, q.MedianMBps)
	v.Met = yesNo(x >= network.Target)
	return []Verdict{v}
}

func writeNetwork(w func(string, ...any), r *Results) {
	n := r.Network
	w("## 6. Guest network: masquerade against a plain tap\n\n")
	if n == nil {
		w("Not measured in this run.\n\n")
		return
	}
	w("The test guest with `virt.bigfile=%d` (a %d MiB file of zeros in its tmpfs, served as `/big` by busybox httpd on port 80; %s of memory) twice, up at the same time: **platform**, the VMI `%s` with the API's default interface (the pod network through the masquerade binding), once `Running` with `status.interfaces[0].infoSource` naming `dhcp`, reached at its pod's IP; **raw libvirt**, the same domain XML (`launcher/domain`) with its interface on a tap of a bridge in a network namespace of the bench's own, booted by a `qemu:///embed` libvirt in a child process inside that namespace, its lease from the launcher's DHCP server (`launcher/dhcp`), reached from the host through a veth pair and a route, forwarded per device with no NAT: the data path a guest NIC has without the binding's rules. Both from the node as root. Each download GETs `/big` on a fresh connection and is timed from the request to the last byte (MB/s = 10⁶ bytes per second); each small request connects, sends `GET / HTTP/1.0` and reads the answer until the guest closes the connection. %d downloads and %d requests per path, alternating between the paths (the first path changes every round) after a warm-up per path that is not timed (downloads: %d, requests: %d), so that what else runs on the machine weighs on both alike.\n\n",
		network.FileMiB, network.FileMiB, network.GuestMemory, n.VMI, n.Downloads, n.Requests, network.WarmupDownloads, network.WarmupRequests)
	w("| path | downloads | median MB/s | min MB/s | max MB/s | requests | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, x := range n.Rows {
		w("| %s | %d | %.0f | %.0f | %.0f | %d | %s | %s | %s |\n",
			x.Path, len(x.MBps), x.MedianMBps, x.MinMBps, x.MaxMBps, x.Requests, msFine(x.P50), msFine(x.P99), msFine(x.Max))
	}
	var runs []string
	for _, x := range n.Rows {
		rates := make([]string, len(x.MBps))
		for i, m := range x.MBps {
			rates[i] = fmt.Sprintf("%.0f", m)
		}
		runs = append(runs, fmt.Sprintf("%s: %s", x.Path, strings.Join(rates, ", ")))
	}
	w("\nEach download in the order they ran (MB/s): %s.\n", strings.Join(runs, "; "))
	if x, ok := n.Ratio(); ok {
		p, _ := n.Row(network.Platform)
		q, _ := n.Row(network.Raw)
		w("\nThrough masquerade: **%.2fx the plain tap's throughput** (target: at least %.1fx); small requests %+.2f ms at p50 and %+.2f ms at p99.\n",
			x, network.Target, float64(p.P50-q.P50)/float64(time.Millisecond), float64(p.P99-q.P99)/float64(time.Millisecond))
	}
	w("\n")
	for _, note := range n.Notes {
		w("- %s\n", note)
	}
	if len(n.Notes) > 0 {
		w("\n")
	}
}

func networkChart(r *Results) (*plot.Plot, error) {
	n := r.Network
	if n == nil || len(n.Rows) == 0 {
		return nil, nil
	}
	cats := []string{"median", "min", "max"}
	series := make([]string, len(n.Rows))
	for i, x := range n.Rows {
		series[i] = x.Path
	}
	return grouped(fmt.Sprintf("6. guest download of %d MiB (higher is better)", network.FileMiB), "MB/s", cats, series, func(s, c int) float64 {
		x := n.Rows[s]
		return []float64{x.MedianMBps, x.MinMBps, x.MaxMBps}[c]
	})
}
