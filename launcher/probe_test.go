package launcher

import (
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// TestWriteNodeFacts probes libvirt's test driver and reads the file back
// as virt-handler would: the hypervisor's facts, no VMI, nothing left
// beside the file.
func TestWriteNodeFacts(t *testing.T) {
	o := NewOptions()
	o.LibvirtURI = "test:///default"
	dir := t.TempDir()
	out := filepath.Join(dir, "facts.json")
	if err := o.WriteNodeFacts(t.Context(), out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var info apiv1.InfoResponse
	if err := protojson.Unmarshal(b, &info); err != nil {
		t.Fatalf("facts are not an InfoResponse: %v\n%s", err, b)
	}
	if info.LibvirtVersion == "" || info.DomainType != "test" || info.Vmi != nil || info.LibvirtUri != "" {
		t.Errorf("facts = %s; want libvirt's version, domain type test, no VMI, no URI", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d files in the directory, want facts.json alone", len(entries))
	}
}
