package launcher_test

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// TestHostileGuestAgentReportIsCut boots the test guest with a guest agent
// that lies (virt.hostileagent=1, hack/build-guest.sh): 1,003 interfaces,
// one with 10,000 addresses, one named by 1 MiB, an address that is not an
// IP, a hardware address that is not a MAC, and in its OS report 1 MiB
// strings and a string whose cut falls inside a character. The launcher
// must report the agent connected and its report cut to what it promises
// the node (strings to the API's bounds and valid UTF-8, lists to twice the
// status bounds), and keep answering, pause and resume included, while the
// agent is polled.
func TestHostileGuestAgentReportIsCut(t *testing.T) {
	l := startLauncher(t, guestVMI("hostileagent", 30, "virt.hostileagent=1"))
	w := watch(t, l)
	boot(t, l)
	l.waitSerial("VIRT-GUEST-AGENT ", bootTimeout)
	w.waitEvent(t, "AGENT/connected", bootTimeout)

	var d *apiv1.Domain
	l.waitFor("the agent's report in GetDomain", bootTimeout, func() bool {
		resp, err := l.client.GetDomain(t.Context(), &apiv1.GetDomainRequest{})
		if err != nil {
			t.Fatalf("GetDomain: %v", err)
		}
		d = resp.GetDomain()
		return len(d.GuestInterfaces) > 0
	})
	if !d.AgentConnected {
		t.Errorf("GetDomain does not report the agent connected")
	}
	t.Logf("the report as the launcher passes it on: %d interfaces, %d bytes", len(d.GuestInterfaces), proto.Size(d))

	const maxIfaces, maxAddrs = 2 * virtv1.MaxStatusInterfaces, 2 * virtv1.MaxInterfaceIPAddresses
	// The guest reports 1,003 interfaces: the list must have been cut, not
	// merely be short.
	if n := len(d.GuestInterfaces); n != maxIfaces {
		t.Errorf("%d interfaces passed on, want the guest's 1003 cut to %d", n, maxIfaces)
	}
	byName := map[string]*apiv1.GuestInterface{}
	for i, gi := range d.GuestInterfaces {
		checkString(t, "interface name", gi.Name, virtv1.MaxGuestStringLength)
		checkString(t, "interface MAC", gi.Mac, virtv1.MaxGuestStringLength)
		if len(gi.IpAddresses) > maxAddrs {
			t.Errorf("interface %d (%.20q) has %d addresses, more than %d", i, gi.Name, len(gi.IpAddresses), maxAddrs)
		}
		for _, a := range gi.IpAddresses {
			checkString(t, "address", a, virtv1.MaxIPAddressLength)
		}
		byName[gi.Name] = gi
	}
	if gi := byName["eth-many"]; gi == nil || len(gi.IpAddresses) != maxAddrs {
		t.Errorf("the interface with 10,000 addresses is %v, want it with its first %d", gi, maxAddrs)
	}
	if gi := byName[strings.Repeat("A", virtv1.MaxGuestStringLength)]; gi == nil {
		t.Errorf("the interface named by 1 MiB is not there cut to %d bytes", virtv1.MaxGuestStringLength)
	}
	// The launcher passes an address that is not an IP on as it is (cut):
	// the node checks addresses before they reach the status.
	if gi := byName["eth-not-ip"]; gi == nil || gi.Mac != "not-a-mac" {
		t.Errorf("the interface with the bad address and MAC is %v", gi)
	}

	os := d.GuestOsInfo
	if os == nil {
		t.Fatalf("no OS report from the agent")
	}
	for what, s := range map[string]string{
		"os name": os.Name, "os pretty name": os.PrettyName, "os id": os.Id, "os version": os.Version,
		"kernel release": os.KernelRelease, "hostname": d.GuestHostname,
	} {
		checkString(t, what, s, virtv1.MaxGuestStringLength)
	}
	if len(os.Name) != virtv1.MaxGuestStringLength || len(d.GuestHostname) != virtv1.MaxGuestStringLength {
		t.Errorf("the 1 MiB name and hostname are %d and %d bytes, want them cut to %d",
			len(os.Name), len(d.GuestHostname), virtv1.MaxGuestStringLength)
	}
	// 255 bytes and then "é"s: a cut at 256 bytes that splits a
	// character would be invalid UTF-8.
	if len(os.Id) != virtv1.MaxGuestStringLength-1 {
		t.Errorf("os id of %d bytes, want the guest's cut before the character that crosses %d bytes", len(os.Id), virtv1.MaxGuestStringLength)
	}

	// The launcher keeps answering promptly across at least one more poll
	// of the agent (every 10 s), and the guest can still be paused and
	// resumed: both change the domain's state while a report is read.
	end := time.Now().Add(12 * time.Second)
	for time.Now().Before(end) {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		start := time.Now()
		_, err := l.client.GetDomain(ctx, &apiv1.GetDomainRequest{})
		cancel()
		if err != nil {
			t.Fatalf("GetDomain while the agent is polled: %v (after %v)", err, time.Since(start))
		}
		time.Sleep(500 * time.Millisecond)
	}
	waitState := func(want apiv1.DomainState) {
		l.waitFor(want.String(), exitTimeout, func() bool {
			resp, err := l.client.GetDomain(t.Context(), &apiv1.GetDomainRequest{})
			if err != nil {
				t.Fatalf("GetDomain: %v", err)
			}
			return resp.GetDomain().State == want
		})
	}
	if _, err := l.client.Pause(t.Context(), &apiv1.PauseRequest{}); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	waitState(apiv1.DomainState_DOMAIN_STATE_PAUSED)
	if _, err := l.client.Unpause(t.Context(), &apiv1.UnpauseRequest{}); err != nil {
		t.Fatalf("Unpause: %v", err)
	}
	waitState(apiv1.DomainState_DOMAIN_STATE_RUNNING)
}

// checkString fails the test unless s is valid UTF-8 of at most max bytes.
func checkString(t *testing.T, what, s string, max int) {
	t.Helper()
	if len(s) > max || !utf8.ValidString(s) {
		t.Errorf("%s of %d bytes (valid UTF-8: %v) passed on; want at most %d bytes of valid UTF-8",
			what, len(s), utf8.ValidString(s), max)
	}
}
