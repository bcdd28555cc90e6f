package hypervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

func TestPrepareEmbedRootAndCache(t *testing.T) {
	root := filepath.Join(t.TempDir(), "libvirt")
	shared := t.TempDir()
	os.WriteFile(filepath.Join(shared, "abc.xml"), []byte("<qemuCaps/>"), 0o644)
	os.WriteFile(filepath.Join(shared, "ignored.txt"), []byte("x"), 0o644)
	if err := PrepareEmbedRoot(root, shared); err != nil {
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
	seeded := filepath.Join(capsCacheDir(root), "abc.xml")
	if b, err := os.ReadFile(seeded); err != nil || string(b) != "<qemuCaps/>" {
		t.Errorf("cache not seeded: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(capsCacheDir(root), "ignored.txt")); !os.IsNotExist(err) {
		t.Errorf("non-XML file copied into the cache")
	}
	// Unchanged entries are not rewritten; new ones are saved back.
	if n, err := SaveCapabilitiesCache(root, shared); err != nil || n != 0 {
		t.Errorf("SaveCapabilitiesCache of an unchanged cache = %d, %v; want 0", n, err)
	}
	os.WriteFile(filepath.Join(capsCacheDir(root), "def.xml"), []byte("<new/>"), 0o644)
	if n, err := SaveCapabilitiesCache(root, shared); err != nil || n != 1 {
		t.Errorf("SaveCapabilitiesCache = %d, %v; want 1", n, err)
	}
	if b, _ := os.ReadFile(filepath.Join(shared, "def.xml")); string(b) != "<new/>" {
		t.Errorf("shared cache lacks the new entry")
	}
	if n, err := SaveCapabilitiesCache(root, ""); n != 0 || err != nil {
		t.Errorf("without a shared cache: %d, %v", n, err)
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
