package vmistatus

import (
	"os"
	"regexp"
	"strings"
	"testing"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// documentedEnd is a row of docs/handler.md's table of a VMI's life for a
// domain that ended: libvirt's state (the StopReason's suffix), the
// libvirt reason when the row names one, the phase and reason the docs
// give it.
var documentedEnd = regexp.MustCompile("^\\| Running \\| ended `([A-Z_]+)`(?: with libvirt reason `([a-z]+)`)?[^|]*\\|[^|]*\\| `([A-Za-z]+)`, `([A-Za-z]+)`")

// TestEndOfDomainAsDocumented: the phase and reason of each ended domain
// are the ones docs/handler.md gives it (a QEMU killed under its launcher
// was LauncherGone in the code although the reasons' definitions make it
// GuestCrashed; the docs followed the code, the reliability suite the
// docs).
func TestEndOfDomainAsDocumented(t *testing.T) {
	raw, err := os.ReadFile("../../docs/handler.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(string(raw), "\n") {
		m := documentedEnd.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows++
		stop, ok := apiv1.StopReason_value["STOP_REASON_"+m[1]]
		if !ok {
			t.Errorf("docs/handler.md names the end %s, which the launcher's API does not have", m[1])
			continue
		}
		got := EndOfDomain(&apiv1.Domain{StopReason: apiv1.StopReason(stop), Reason: m[2]})
		if string(got.Phase) != m[3] || got.Reason != m[4] {
			t.Errorf("a domain ended %s (libvirt %q) is %s/%s, docs/handler.md says %s/%s", m[1], m[2], got.Phase, got.Reason, m[3], m[4])
		}
	}
	if rows < 4 {
		t.Errorf("docs/handler.md has %d rows of ended domains, want the 4 (shutdown, crashed, QEMU failed, destroyed)", rows)
	}
}
