package report

import (
	"fmt"
	"strings"
	"time"

	"kubevirt.dev/virt/bench/migration"
)

func writeMigration(w func(string, ...any), r *Results) {
	m := r.Migration
	w("## 8. Live migration against raw libvirt\n\n")
	if m == nil {
		w("Not measured in this run.\n\n")
		return
	}
	w("The test guest (`hack/build-guest.sh`, a heartbeat on ttyS0 every 100 ms: `virt.tick=1`) at 128 and 512 MiB, idle and rewriting a quarter of its memory without end (`virt.dirty=N`), each moved once per side and round, raw libvirt first, one guest on the machine at a time. **platform**: a VirtualMachineInstanceMigration created for the running VMI (cluster of %d node(s): a single node migrates within it, `--migration-same-node=IfOnlyNode`), timed from before its creation to the watch seeing it `Succeeded`; the downtime is `status.migrationState.downtimeMilliseconds` (libvirt's statistic of the completed job, from the target). **raw libvirt**: the same domain XML (`launcher/domain`, without the pod's NIC) started by an embedded libvirt (`qemu:///embed`, what a source launcher runs) and moved peer to peer to a private `libvirtd` (`hypervisor.StartDaemon`, what a target launcher runs: its own configuration directory, socket and random `host_uuid`) on the same machine, both as uid 107, through a `unix://` migration URI and no proxy, with the flags of the platform's source (`hypervisor.Conn.Migrate`); timed around the migrate call, the downtime libvirt's statistic of the completed job on the target. In both, the heartbeat must go on at the target.\n\n", m.Nodes)
	if m.RawPaused() {
		w("**The memory was copied with the guest paused on both sides** (`PEER2PEER|PERSIST_DEST` without `VIR_MIGRATE_LIVE`): under TCG with QEMU before 9.0 a live copy loses the guest's last writes (`hypervisor.LiveMigrationLosesWrites`, docs/launcher.md \"Live migration\"), so the platform does not copy live here and raw libvirt does as it does. The \"downtime\" is therefore the whole memory copy, not a switch-over pause. The platform's migration state says so: mode `Paused` (KubeVirt's value for a copy with the guest paused).\n\n")
	}
	w("| guest | side | total s | downtime ms | libvirt job s | moved MiB | memory copy |\n|---|---|---|---|---|---|---|\n")
	for _, x := range m.Moves {
		if !x.OK() {
			w("| %s | %s | failed: %s | | | | |\n", x.Case.Name(), x.Side, cell(x.Error))
			continue
		}
		job, moved := "", ""
		if x.Job > 0 {
			job = secs3(x.Job)
		}
		if x.DataMiB > 0 {
			moved = fmt.Sprintf("%.0f", x.DataMiB)
		}
		w("| %s | %s | %s | %d | %s | %s | %s |\n", x.Case.Name(), x.Side, secs3(x.Total), x.Downtime.Milliseconds(), job, moved, copyMode(x))
	}
	w("\nEach side's median total and median downtime over its completed runs:\n\n| guest | total: platform − raw s (target ≤ +%.0f s) | downtime: platform / raw (target ≤ %.1fx) |\n|---|---|---|\n", migration.TotalSlack.Seconds(), migration.DowntimeRatio)
	for _, p := range m.Pairs() {
		d, t, ok := p.Verdict()
		if !ok {
			w("| %s | not measured on both sides | |\n", p.Case.Name())
			continue
		}
		w("| %s | %+.2f: %s | %.2fx: %s |\n", p.Case.Name(), (p.Platform.Total - p.Raw.Total).Seconds(), passFail(t),
			durRatio(p.Platform.Downtime, p.Raw.Downtime), passFail(d))
	}
	w("\n")
	var phases []string
	for _, x := range m.Moves {
		if x.Side != migration.Platform || len(x.Phases) == 0 {
			continue
		}
		var steps []string
		for _, p := range x.Phases {
			steps = append(steps, fmt.Sprintf("%s %s", p.Phase, secs3(p.At)))
		}
		phases = append(phases, fmt.Sprintf("- %s: %s", x.Case.Name(), strings.Join(steps, ", ")))
	}
	if len(phases) > 0 {
		w("Where the platform's time went: each phase of the migration object as the watch first saw it, seconds after its creation was sent:\n\n%s\n\n", strings.Join(phases, "\n"))
	}
	for _, note := range m.Notes {
		w("- %s\n", note)
	}
	if len(m.Notes) > 0 {
		w("\n")
	}
}

func migrationVerdicts(r *Results) []Verdict {
	m := r.Migration
	if m == nil {
		return nil
	}
	var out []Verdict
	for _, p := range m.Pairs() {
		d, t, ok := p.Verdict()
		vt := Verdict{Target: fmt.Sprintf("migration, %s: total ≤ raw libvirt + %.0f s", p.Case.Name(), migration.TotalSlack.Seconds()), Met: "not measured"}
		vd := Verdict{Target: fmt.Sprintf("migration, %s: downtime ≤ %.1fx raw libvirt", p.Case.Name(), migration.DowntimeRatio), Met: "not measured"}
		if ok {
			vt.Measured = fmt.Sprintf("%s s against %s s", secs3(p.Platform.Total), secs3(p.Raw.Total))
			vt.Met = yesNo(t)
			vd.Measured = fmt.Sprintf("%d ms against %d ms (%.2fx)", p.Platform.Downtime.Milliseconds(), p.Raw.Downtime.Milliseconds(), durRatio(p.Platform.Downtime, p.Raw.Downtime))
			vd.Met = yesNo(d)
		}
		out = append(out, vt, vd)
	}
	return out
}

func secs3(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }

func durRatio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "**FAIL**"
}

// copyMode is how the move copied the memory: raw libvirt's own decision,
// the platform's as its migration state reports it.
func copyMode(m migration.Move) string {
	if m.Side == migration.Platform {
		if m.Mode == "" {
			return "mode not recorded"
		}
		return "mode " + m.Mode
	}
	if m.Paused {
		return "paused"
	}
	return "live"
}
