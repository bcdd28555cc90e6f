package report

import (
	"fmt"
	"strings"
	"time"

	"gonum.org/v1/plot"

	"kubevirt.dev/virt/bench/debian"
)

func secs(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

func writeDebian(w func(string, ...any), r *Results) {
	d := r.Debian
	w("## 7. Debian guest: POST → SSH-ready against raw libvirt\n\n")
	if d == nil {
		w("Not measured in this run.\n\n")
		return
	}
	w("A real cloud guest's boot: the Debian 12 image of `hack/build-debian-image.sh` (systemd, cloud-init NoCloud, OpenSSH, the guest agent; BIOS, its own disk) with the template of `artifacts/examples/vm-debian.yaml` (%s), timed until the first SSH login. **platform**: a VMI posted to the API (its containerDisk `localhost/debian-disk:dev`, an ephemeral qcow2 overlay over it), from the POST to `Running` (watch) and to the first login at `status.interfaces[0].ipAddress`; **raw libvirt**: the same domain XML (`launcher/domain`, its disks made by the launcher's `launcher/disk`: a qcow2 overlay over the same image and the same NoCloud ISO) defined and started by a `qemu:///embed` libvirt, its NIC on a plain tap, from the define to libvirt's start returning and to the first login at its lease. A login is an SSH connection from the node as root with an ed25519 key the bench makes per run and puts in the example's user data, the user's login and `true`, tried every %s until one succeeds. %d boots per side, alternating between the sides (each goes first every other round), one guest on the machine at a time. No target is set: the difference and the ratio are what it is for.\n\n",
		d.Memory, debian.ProbeInterval, d.RunsPerSide)
	w("| side | boots | to Running, median s | to SSH login, median s | min s | max s |\n|---|---|---|---|---|---|\n")
	for _, x := range d.Rows {
		w("| %s | %d | %s | %s | %s | %s |\n", x.Side, len(x.SSH), secs(x.RunningMedian), secs(x.SSHMedian), secs(x.MinSSH), secs(x.MaxSSH))
	}
	var boots []string
	for i, b := range d.Boots {
		boots = append(boots, fmt.Sprintf("%d. %s: Running %s s, SSH %s s (%d logins tried)", i+1, b.Side, secs(b.Running), secs(b.SSH), b.Probes))
	}
	if len(boots) > 0 {
		w("\nEach boot in the order they ran: %s.\n", strings.Join(boots, "; "))
	}
	if x, ok := d.Ratio(); ok {
		p, _ := d.Row(debian.Platform)
		q, _ := d.Row(debian.Raw)
		w("\nThe platform to the first SSH login: **%+.1f s at the median, %.2fx raw libvirt's** (%s s against %s s); to Running %+.1f s.\n",
			(p.SSHMedian - q.SSHMedian).Seconds(), x, secs(p.SSHMedian), secs(q.SSHMedian), (p.RunningMedian - q.RunningMedian).Seconds())
	}
	w("\n")
	for _, note := range d.Notes {
		w("- %s\n", note)
	}
	if len(d.Notes) > 0 {
		w("\n")
	}
}

func debianChart(r *Results) (*plot.Plot, error) {
	d := r.Debian
	if d == nil || len(d.Rows) == 0 {
		return nil, nil
	}
	cats := []string{"to Running", "to SSH login"}
	series := make([]string, len(d.Rows))
	for i, x := range d.Rows {
		series[i] = x.Side
	}
	return grouped("7. Debian guest, median (lower is better)", "s", cats, series, func(s, c int) float64 {
		x := d.Rows[s]
		return []time.Duration{x.RunningMedian, x.SSHMedian}[c].Seconds()
	})
}
