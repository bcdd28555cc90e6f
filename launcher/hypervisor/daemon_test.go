package hypervisor

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func TestDaemonURIReachesTheSocketOnly(t *testing.T) {
	uri := DaemonURI("/var/run/virt/mig/libvirt")
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	// The unprivileged daemon's driver is the session driver; the remote
	// driver must not spawn or look for any other daemon.
	if u.Scheme != "qemu+unix" || u.Path != "/session" || u.Query().Get("socket") != "/var/run/virt/mig/libvirt" {
		t.Errorf("DaemonURI = %s", uri)
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestDaemonConfHasARandomHostUUID(t *testing.T) {
	a, err := randomUUID()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := randomUUID()
	if !uuidRE.MatchString(a) || a == b {
		t.Errorf("randomUUID = %q, %q; want two distinct version 4 UUIDs", a, b)
	}
	conf := daemonConf(a)
	for _, want := range []string{`host_uuid = "` + a + `"`, `auth_unix_rw = "none"`} {
		if !strings.Contains(conf, want) {
			t.Errorf("libvirtd.conf lacks %s:\n%s", want, conf)
		}
	}
	// No network listener: socket activation gives the daemon its one
	// socket, and nothing asks it to listen on TCP.
	if strings.Contains(conf, "listen_tcp") || strings.Contains(conf, "listen_tls") {
		t.Errorf("libvirtd.conf configures a TCP listener:\n%s", conf)
	}
}

// The launcher's libvirt log settings reach the private libvirtd, and
// nothing else of its environment does.
func TestLibvirtLogEnv(t *testing.T) {
	t.Setenv("LIBVIRT_LOG_FILTERS", "1:qemu.qemu_migration")
	t.Setenv("LIBVIRT_LOG_OUTPUTS", "1:stderr")
	t.Setenv("LIBVIRT_DEFAULT_URI", "qemu:///system")
	got := strings.Join(libvirtLogEnv(), " ")
	if want := "LIBVIRT_LOG_FILTERS=1:qemu.qemu_migration LIBVIRT_LOG_OUTPUTS=1:stderr"; got != want {
		t.Errorf("libvirtLogEnv() = %q, want %q", got, want)
	}
}
