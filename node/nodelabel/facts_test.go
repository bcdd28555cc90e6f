package nodelabel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kubevirt.dev/virt/internal/capability"
	"kubevirt.dev/virt/launcher/layout"
)

// TestReadFacts reads a file as virt-launcher --probe-node writes it (an
// unknown field of a later launcher ignored) and refuses what is not one.
func TestReadFacts(t *testing.T) {
	f, err := ReadFacts("testdata/facts.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := (capability.Facts{LibvirtVersion: "9.0.0", HypervisorVersion: "7.2.22", DomainType: "qemu"}); f != want {
		t.Errorf("ReadFacts = %+v, want %+v", f, want)
	}
	if l := capability.Labels(f); l[capability.Prefix+"capability-kvm"] != "false" || l[capability.Prefix+"capability-nic-igb"] != "false" {
		t.Errorf("labels of the fixture = %v, want kvm and nic-igb false", l)
	}

	dir := t.TempDir()
	for name, content := range map[string]string{
		"empty":     "{}",
		"not json":  "libvirt 9.0.0",
		"too large": `{"domainType": "kvm", "libvirtVersion": "9.0.0", "arch": "` + strings.Repeat("x", layout.NodeFactsMaxBytes) + `"}`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if f, err := ReadFacts(p); err == nil {
			t.Errorf("%s: ReadFacts = %+v, want an error", name, f)
		}
	}
	if _, err := ReadFacts(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v, want not-exist", err)
	}
}
