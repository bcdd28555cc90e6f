package debian

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdomanski/iso9660"
	"golang.org/x/crypto/ssh"
	"libvirt.org/go/libvirtxml"

	"kubevirt.dev/virt/bench/rawguest"
	"kubevirt.dev/virt/launcher/domain"
)

// The raw guest's files are the launcher's: an overlay over the image,
// reached through this process's root as a container disk is through its
// container's, and the NoCloud ISO with the bench's key and the VMI's
// identity; its domain boots the overlay with the ISO beside it and its
// NIC on the plain tap.
func TestRawDomain(t *testing.T) {
	g, err := ReadGuest(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	image := filepath.Join(t.TempDir(), "disk.qcow2")
	if out, err := exec.Command("qemu-img", "create", "-q", "-f", "qcow2", image, "64M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img create: %v: %s", err, out)
	}
	vmi := rawVMI(g, "debian-raw-1")
	name, xml, serialLog, err := rawDomain(vmi, dir, domain.TypeQEMU, image)
	if err != nil {
		t.Fatal(err)
	}
	if name != domain.Name(Namespace, "debian-raw-1", vmi.UID) || serialLog != filepath.Join(dir, "serial0.log") {
		t.Errorf("domain %q, serial log %q", name, serialLog)
	}

	var d libvirtxml.Domain
	if err := d.Unmarshal(xml); err != nil {
		t.Fatal(err)
	}
	disks := map[string]libvirtxml.DomainDisk{}
	for _, dd := range d.Devices.Disks {
		disks[strings.TrimPrefix(dd.Alias.Name, domain.AliasPrefix)] = dd
	}
	root, ci := disks["rootdisk"], disks["cloudinit"]
	if root.Source == nil || root.Source.File == nil || root.Driver == nil || root.Driver.Type != "qcow2" || root.Boot == nil || root.Boot.Order != 1 {
		t.Fatalf("root disk %+v, want the qcow2 overlay booted first", root)
	}
	if ci.Source == nil || ci.Source.File == nil || ci.Driver == nil || ci.Driver.Type != "raw" {
		t.Fatalf("cloud-init disk %+v, want the raw ISO", ci)
	}
	overlay := root.Source.File.File
	if !strings.HasPrefix(overlay, dir+"/") {
		t.Errorf("overlay %s outside the guest's directory %s", overlay, dir)
	}
	var info struct {
		Format          string `json:"format"`
		BackingFilename string `json:"backing-filename"`
		BackingFormat   string `json:"backing-filename-format"`
	}
	out, err := exec.Command("qemu-img", "info", "--output=json", overlay).Output()
	if err != nil {
		t.Fatalf("qemu-img info %s: %v", overlay, err)
	}
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	wantBacking := fmt.Sprintf("/proc/%d/root%s", os.Getpid(), image)
	if info.Format != "qcow2" || info.BackingFilename != wantBacking || info.BackingFormat != "qcow2" {
		t.Errorf("overlay %+v, want qcow2 over %s (qcow2)", info, wantBacking)
	}

	files := readISO(t, ci.Source.File.File)
	key := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(g.Signer.PublicKey())))
	if !strings.Contains(files["user-data"], key) {
		t.Errorf("user-data lacks the bench's key:\n%s", files["user-data"])
	}
	if want := fmt.Sprintf("instance-id: %s\nlocal-hostname: debian-raw-1\n", vmi.UID); files["meta-data"] != want {
		t.Errorf("meta-data %q, want %q", files["meta-data"], want)
	}

	if len(d.Devices.Interfaces) != 1 {
		t.Fatalf("interfaces %+v, want one", d.Devices.Interfaces)
	}
	nic := d.Devices.Interfaces[0]
	if nic.Target == nil || nic.Target.Dev != rawguest.TapName || nic.MAC == nil || nic.MAC.Address != guestMAC || nic.MTU == nil || nic.MTU.Size != rawguest.LinkMTU {
		t.Errorf("interface %+v, want the plain tap %s with %s and MTU %d", nic, rawguest.TapName, guestMAC, rawguest.LinkMTU)
	}
	if d.Memory == nil || d.Memory.Value != 512<<10 || d.Memory.Unit != "KiB" {
		t.Errorf("memory %+v, want 512 MiB", d.Memory)
	}
}

// A second raw guest is another instance to cloud-init.
func TestRawVMIHasItsOwnUID(t *testing.T) {
	g, err := ReadGuest(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	a, b := rawVMI(g, "a"), rawVMI(g, "a")
	if a.UID == "" || a.UID == b.UID {
		t.Errorf("UIDs %q and %q", a.UID, b.UID)
	}
	if len(a.Spec.Domain.Devices.Interfaces) != 1 || a.Spec.Domain.Devices.Interfaces[0].Masquerade == nil {
		t.Errorf("interfaces %+v, want the example's masquerade one", a.Spec.Domain.Devices.Interfaces)
	}
}

// readISO returns the files of an ISO's root by their names in lower case.
func readISO(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := iso9660.OpenImage(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	root, err := img.RootDir()
	if err != nil {
		t.Fatal(err)
	}
	children, err := root.GetChildren()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range children {
		b, err := io.ReadAll(c.Reader())
		if err != nil {
			t.Fatal(err)
		}
		name := strings.ToLower(strings.TrimSuffix(c.Name(), ";1"))
		out[name] = string(b)
	}
	return out
}
