package hypervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"libvirt.org/go/libvirt"
)

func TestEmbedURIRoundTrip(t *testing.T) {
	root := "/var/run/virt/libvirt dir"
	uri := EmbedURI(root)
	if got := EmbedRoot(uri); got != root {
		t.Errorf("EmbedRoot(%q) = %q, want %q", uri, got, root)
	}
	for _, other := range []string{"qemu:///system", "test:///default", "qemu+unix:///system?socket=/x"} {
		if got := EmbedRoot(other); got != "" {
			t.Errorf("EmbedRoot(%q) = %q, want empty", other, got)
		}
	}
}

func TestPrepareEmbedRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "libvirt")
	if err := PrepareEmbedRoot(root); err != nil {
		t.Fatal(err)
	}
	conf, err := os.ReadFile(filepath.Join(root, "etc", "qemu.conf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`stdio_handler = "file"`, `user = "+`, "cgroup_controllers = [ ]"} {
		if !strings.Contains(string(conf), want) {
			t.Errorf("qemu.conf lacks %q:\n%s", want, conf)
		}
	}
}

// TestCapabilitiesSeed writes a seed from a root's cache, as the image
// build does, and seeds fresh roots from it: the ctimes are those of the
// files where they are now while the files are the probed ones (same size
// and mtime), and left alone, for libvirt to re-probe, once a file differs.
func TestCapabilitiesSeed(t *testing.T) {
	dir := t.TempDir()
	emulator := filepath.Join(dir, "qemu-system-x86_64")
	module := filepath.Join(dir, "libvirt_driver_qemu.so")
	os.WriteFile(emulator, []byte("qemu"), 0o755)
	os.WriteFile(module, []byte("module"), 0o644)
	t.Setenv("LIBVIRT_DRIVER_DIR", dir)
	daemon := filepath.Join(dir, "libvirtd")
	os.WriteFile(daemon, []byte("daemon"), 0o755)
	defer func(old string) { DaemonBinary = old }(DaemonBinary)
	DaemonBinary = daemon
	entry := fmt.Sprintf("<qemuCaps>\n  <emulator>%s</emulator>\n  <qemuctime>1</qemuctime>\n  <qemumoddirmtime>5</qemumoddirmtime>\n  <selfctime>2</selfctime>\n  <selfvers>9000000</selfvers>\n</qemuCaps>\n", emulator)

	probed := filepath.Join(dir, "probed")
	os.MkdirAll(capsCacheDir(probed), 0o700)
	os.WriteFile(filepath.Join(capsCacheDir(probed), "abc.xml"), []byte(entry), 0o600)
	os.WriteFile(filepath.Join(capsCacheDir(probed), "ignored.txt"), []byte("x"), 0o600)
	seed := filepath.Join(dir, "seed")
	if n, err := WriteCapabilitiesSeed(probed, seed); err != nil || n != 1 {
		t.Fatalf("WriteCapabilitiesSeed = %d, %v; want 1 entry", n, err)
	}
	if _, err := os.Stat(filepath.Join(seed, "ignored.txt")); !os.IsNotExist(err) {
		t.Errorf("a non-XML file went into the seed")
	}

	ctime := func(p string) string {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(st.Ctim.Sec)
	}
	seedRoot := func(name string) (string, int) {
		root := filepath.Join(dir, name)
		seeded, err := SeedCapabilities(seed, root)
		if err != nil || seeded.Copied != 1 {
			t.Fatalf("SeedCapabilities = %+v, %v; want 1 entry", seeded, err)
		}
		b, err := os.ReadFile(filepath.Join(capsCacheDir(root), "abc.xml"))
		if err != nil {
			t.Fatal(err)
		}
		if seeded.Kept() != 1 {
			t.Errorf("Kept = %d right after seeding, want 1", seeded.Kept())
		}
		// libvirt re-probing rewrites the entry: no longer kept.
		os.WriteFile(filepath.Join(capsCacheDir(root), "abc.xml"), []byte("<qemuCaps>probed</qemuCaps>"), 0o600)
		if seeded.Kept() != 0 {
			t.Errorf("Kept = %d after the entry was rewritten, want 0", seeded.Kept())
		}
		return string(b), seeded.Vouched
	}

	got, vouched := seedRoot("same")
	want := strings.NewReplacer("<qemuctime>1<", "<qemuctime>"+ctime(emulator)+"<",
		"<selfctime>2<", "<selfctime>"+ctime(module)+"<").Replace(entry)
	if vouched != 1 || got != want {
		t.Errorf("seeded from the probed files: vouched %d, entry\n%s\nwant\n%s", vouched, got, want)
	}

	// A private libvirtd records the later of its own ctime and the
	// module's: make the daemon's the later one.
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return fmt.Sprint(time.Now().Unix()) != ctime(module), nil
	})
	if err != nil {
		t.Fatalf("the clock did not pass the module's ctime: %v", err)
	}
	if err := os.Chmod(daemon, 0o755); err != nil {
		t.Fatal(err)
	}
	daemonRoot := filepath.Join(dir, "daemon")
	seeded, err := seedCache(seed, capsCacheDir(daemonRoot), daemon)
	if err != nil || seeded.Vouched != 1 || seeded.Kept() != 1 {
		t.Fatalf("seeding for the daemon = %+v, %v; want 1 entry vouched for", seeded, err)
	}
	b, _ := os.ReadFile(filepath.Join(capsCacheDir(daemonRoot), "abc.xml"))
	want = strings.NewReplacer("<qemuctime>1<", "<qemuctime>"+ctime(emulator)+"<",
		"<selfctime>2<", "<selfctime>"+ctime(daemon)+"<").Replace(entry)
	if string(b) != want {
		t.Errorf("seeded for the daemon:\n%s\nwant\n%s", b, want)
	}
	// Another daemon binary than the seed's: not vouched for.
	if seeded, _ := seedCache(seed, capsCacheDir(filepath.Join(dir, "otherdaemon")), emulator); seeded.Vouched != 0 {
		t.Errorf("seeding for a daemon the seed does not name vouched for %d entries", seeded.Vouched)
	}

	// Another emulator binary (same size, other mtime): libvirt must see
	// the probe's ctimes, which do not fit, and probe again.
	if err := os.Chtimes(emulator, time.Now(), time.Unix(12345, 0)); err != nil {
		t.Fatal(err)
	}
	if got, vouched := seedRoot("changed"); vouched != 0 || got != entry {
		t.Errorf("seeded after the emulator changed: vouched %d, entry\n%s\nwant it unchanged", vouched, got)
	}

	// Without a manifest nothing is vouched for.
	os.Remove(filepath.Join(seed, SeedManifestName))
	if got, vouched := seedRoot("nomanifest"); vouched != 0 || got != entry {
		t.Errorf("seeded without a manifest: vouched %d, entry\n%s", vouched, got)
	}

	// No seed at all: nothing copied, no error.
	if seeded, err := SeedCapabilities(filepath.Join(dir, "missing"), filepath.Join(dir, "r")); seeded.Copied != 0 || err != nil {
		t.Errorf("SeedCapabilities of a missing seed = %+v, %v", seeded, err)
	}
}

func TestTestDriver(t *testing.T) {
	c, err := Open("test:///default")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer c.Close()
	info, err := c.Info()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.EqualFold(info.Driver, "test") || info.LibvirtVersion == "" || info.Arch == "" {
		t.Errorf("Info = %+v", info)
	}
	// The test driver ships a running domain named "test".
	if st, err := c.Status("test"); err != nil || st.State != "running" {
		t.Errorf("Status(test) = %+v, %v", st, err)
	}
	if _, err := c.Status("no-such-domain"); !IsNotFound(err) {
		t.Errorf("Status of a missing domain: %v, want not found", err)
	}
}

// An operation that finds its domain gone reports ErrNotFound as a failed
// lookup does, keeping libvirt's text.
func TestNotFound(t *testing.T) {
	lerr := libvirt.Error{Code: libvirt.ERR_NO_DOMAIN, Message: "Domain not found"}
	err := fmt.Errorf("start domain d: %w", notFound(lerr))
	if !IsNotFound(err) || !errors.Is(err, lerr) || err.Error() != "start domain d: "+lerr.Error() {
		t.Errorf("notFound(ERR_NO_DOMAIN) = %v", err)
	}
	other := libvirt.Error{Code: libvirt.ERR_OPERATION_INVALID, Message: "Domain not found in the text only"}
	if got := notFound(other); IsNotFound(got) || got != error(other) {
		t.Errorf("notFound(ERR_OPERATION_INVALID) = %v", got)
	}
}

// libvirt's errors about the definition are ErrInvalidConfig, keeping
// libvirt's text; errors of the host or the moment are not.
func TestInvalidConfig(t *testing.T) {
	for _, code := range []libvirt.ErrorNumber{libvirt.ERR_XML_ERROR, libvirt.ERR_CONFIG_UNSUPPORTED, libvirt.ERR_INVALID_ARG, libvirt.ERR_XML_DETAIL} {
		lerr := libvirt.Error{Code: code, Message: "bad"}
		err := fmt.Errorf("define domain: %w", invalidConfig(lerr))
		if !IsInvalidConfig(err) || !errors.Is(err, lerr) || IsNotFound(err) || err.Error() != "define domain: "+lerr.Error() {
			t.Errorf("invalidConfig(%d) = %v", code, err)
		}
	}
	for _, code := range []libvirt.ErrorNumber{libvirt.ERR_INTERNAL_ERROR, libvirt.ERR_OPERATION_FAILED, libvirt.ERR_SYSTEM_ERROR, libvirt.ERR_NO_DOMAIN} {
		lerr := libvirt.Error{Code: code, Message: "transient"}
		if got := invalidConfig(lerr); IsInvalidConfig(got) || got != error(lerr) {
			t.Errorf("invalidConfig(%d) = %v, want it unchanged", code, got)
		}
	}
}

// The test driver refuses malformed XML the way QEMU's does.
func TestDefineInvalidXML(t *testing.T) {
	c, err := Open("test:///default")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, xml := range []string{"<domain", `<domain type="test"><name>x</name><memory>a lot</memory></domain>`} {
		if err := c.Define(xml); !IsInvalidConfig(err) {
			t.Errorf("Define(%q) = %v, want ErrInvalidConfig", xml, err)
		}
	}
}

// Root libvirt runs swtpm as tss unless qemu.conf names another user;
// unprivileged libvirt cannot start swtpm at all when it names one.
func TestQEMUConfNamesSwtpmUserOnlyAsRoot(t *testing.T) {
	if conf := QEMUConf(0, 0); !strings.Contains(conf, `swtpm_user = "+0"`) || !strings.Contains(conf, `swtpm_group = "+0"`) {
		t.Errorf("root's qemu.conf lacks swtpm_user/swtpm_group +0:\n%s", conf)
	}
	if conf := QEMUConf(107, 107); strings.Contains(conf, "swtpm_") {
		t.Errorf("an unprivileged qemu.conf names a swtpm user:\n%s", conf)
	}
}

// Only TCG before QEMU 9.0 loses writes in a live migration; the test
// driver's hypervisor version (2.0.0) stands in for an old QEMU.
func TestLiveMigrationLosesWrites(t *testing.T) {
	c, err := Open("test:///default")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer c.Close()
	v, err := c.conn.GetVersion()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		domainType string
		want       bool
	}{{"kvm", false}, {"test", false}, {"qemu", v < tcgTracksAllWrites}} {
		if got, err := c.LiveMigrationLosesWrites(tc.domainType); got != tc.want || err != nil {
			t.Errorf("LiveMigrationLosesWrites(%s) with hypervisor version %d = %v, %v; want %v", tc.domainType, v, got, err, tc.want)
		}
	}
	if v >= tcgTracksAllWrites {
		t.Errorf("the test driver's hypervisor version %d; want one before QEMU 9.0 so that the check means something", v)
	}
}
