package report

import (
	"fmt"
	"strings"

	"gonum.org/v1/plot"
)

func launcherVerdicts(r *Results) []Verdict {
	own := Verdict{Target: "launcher pod's own processes (all but QEMU) <= 40 MiB"}
	pod := Verdict{Target: "whole launcher pod minus guest RAM and TCG buffer <= 110 MiB (KubeVirt budgets 240 MiB)"}
	l := r.Launcher
	if l == nil || len(l.Measurements) == 0 {
		own.Measured, own.Met = "—", "not measured"
		pod.Measured, pod.Met = "—", "not measured"
		return []Verdict{own, pod}
	}
	m := l.Measurements[0]
	own.Measured = fmt.Sprintf("%s MiB", mib(m.Own))
	own.Met = yesNo(m.Own <= 40<<20)
	pod.Measured = fmt.Sprintf("%s MiB", mib(m.PodMinusGuest))
	pod.Met = yesNo(m.PodMinusGuest <= 110<<20)
	return []Verdict{own, pod}
}

func writeLauncher(w func(string, ...any), r *Results) {
	l := r.Launcher
	w("## 4. Launcher overhead\n\n")
	if l == nil {
		w("Not measured in this run.\n\n")
		return
	}
	w("The test guest (128 MiB, TCG) booted to its marker and left running %s before measuring. Memory is resident set size from `/proc/<pid>/status`; the pod's processes are found through the pod's cgroup. QEMU's RSS is split using its `/proc/<pid>/smaps`: the guest's RAM is the anonymous mapping of exactly the guest's size, the TCG translation buffer the anonymous executable (rwx) mapping QEMU allocates for generated code; the rest is QEMU's own. \"Minus guest\" = every process but QEMU + QEMU's own part. The host rows run the same launcher binary as the pod's user (uid 107, no capabilities, `setpriv`), once with its embedded libvirt and once with `--libvirt-uri qemu:///session` against a `libvirtd` started for it alone as the same user (XDG directories in a temporary directory, `stdio_handler = \"file\"` as in the embedded qemu.conf, so no virtlogd).\n\n", "5s")
	w("| setup | all but QEMU MiB | QEMU total MiB | guest RAM MiB | TCG buffer MiB | QEMU own MiB | all minus guest RAM and TCG MiB | pod cgroup usage MiB | processes: RSS MiB (anonymous part) |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, m := range l.Measurements {
		var ps []string
		for _, p := range m.Processes {
			ps = append(ps, fmt.Sprintf("%s %s (%s anon)", p.Comm, mib(p.RSS), mib(p.Anon)))
		}
		cg := "—"
		if m.Cgroup > 0 {
			cg = mib(m.Cgroup)
		}
		w("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", m.Setup, mib(m.Own), mib(m.QEMU.Total), mib(m.QEMU.GuestRAM), mib(m.QEMU.TCG), mib(m.QEMU.Own), mib(m.PodMinusGuest), cg, strings.Join(ps, ", "))
	}
	if len(l.Measurements) > 0 {
		m := l.Measurements[0]
		var file int64
		for _, p := range m.Processes {
			if !strings.HasPrefix(p.Comm, "qemu-system") {
				file += p.RSS - p.Anon
			}
		}
		w("\nOf the pod's %s MiB outside QEMU, %s MiB are file pages (the binaries and shared libraries: libvirt, glib, libxml2...), which every launcher on a node shares through the page cache; %s MiB are private to the pod.\n",
			mib(m.Own), mib(file), mib(m.Own-file))
	}
	if len(l.Measurements) == 3 {
		e, p := l.Measurements[1], l.Measurements[2]
		w("\nEmbedded libvirt against a private libvirtd (host): the launcher's side costs %s MiB embedded and %s MiB with its own libvirtd (%+.0f MiB).\n",
			mib(e.Own), mib(p.Own), float64(p.Own-e.Own)/(1<<20))
	}
	for _, n := range l.Notes {
		w("- %s\n", n)
	}
	w("\n")
}

func launcherChart(r *Results) (*plot.Plot, error) {
	l := r.Launcher
	if l == nil || len(l.Measurements) == 0 {
		return nil, nil
	}
	cats := make([]string, len(l.Measurements))
	for i, m := range l.Measurements {
		cats[i] = strings.SplitN(m.Setup, " (", 2)[0]
		cats[i] = strings.TrimPrefix(cats[i], "virt-launcher + ")
	}
	series := []string{"all but QEMU", "QEMU own", "TCG buffer", "guest RAM"}
	return grouped("4. launcher memory, MiB (lower is better)", "MiB", cats, series, func(s, c int) float64 {
		m := l.Measurements[c]
		return float64([]int64{m.Own, m.QEMU.Own, m.QEMU.TCG, m.QEMU.GuestRAM}[s]) / (1 << 20)
	})
}
