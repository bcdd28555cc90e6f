package debian

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// exampleFile is the example both sides boot.
var exampleFile = filepath.Join("..", "..", "artifacts", "examples", "vm-debian.yaml")

// The example's template comes through whole, but for the bench's key in
// place of the placeholder; the user is the one whose key it was.
func TestReadGuest(t *testing.T) {
	g, err := ReadGuest(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	if g.User != "debian" {
		t.Errorf("user %q, want debian", g.User)
	}
	if got := g.Template.Spec.Domain.Resources.Requests[corev1.ResourceMemory]; got.Cmp(resource.MustParse("512Mi")) != 0 || g.Memory() != "512Mi" {
		t.Errorf("memory %s (%s), want 512Mi", got.String(), g.Memory())
	}
	key := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(g.Signer.PublicKey())))
	if !strings.HasPrefix(key, "ssh-ed25519 ") {
		t.Errorf("key %q, want an ed25519 one", key)
	}
	var userData string
	var containerDisk string
	for _, v := range g.Template.Spec.Volumes {
		if v.CloudInitNoCloud != nil {
			userData = v.CloudInitNoCloud.UserData
		}
		if v.ContainerDisk != nil {
			containerDisk = v.ContainerDisk.Image
		}
	}
	if strings.Contains(userData, KeyPlaceholder) || !strings.Contains(userData, "- "+key+"\n") {
		t.Errorf("user data does not authorize the bench's key in place of the placeholder:\n%s", userData)
	}
	if containerDisk != "localhost/debian-disk:dev" {
		t.Errorf("container disk %q, want localhost/debian-disk:dev", containerDisk)
	}

	// Nothing else differs from the example.
	again, err := ReadGuest(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	restore := func(g Guest) string {
		k := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(g.Signer.PublicKey())))
		for _, v := range g.Template.Spec.Volumes {
			if v.CloudInitNoCloud != nil {
				return strings.ReplaceAll(v.CloudInitNoCloud.UserData, k, KeyPlaceholder)
			}
		}
		return ""
	}
	example, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	if restore(g) != restore(again) || !strings.Contains(indentless(string(example)), indentless(restore(g))) {
		t.Errorf("user data differs from the example's beyond the key:\n%s", restore(g))
	}
	if g.Signer.PublicKey().Marshal() == nil || string(g.Signer.PublicKey().Marshal()) == string(again.Signer.PublicKey().Marshal()) {
		t.Error("two reads made the same key: each run must make its own")
	}
}

// indentless drops the leading blanks of every line, so that the user
// data compares with its block in the manifest.
func indentless(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimLeft(l, " ")
	}
	return strings.Join(lines, "\n")
}

// A VMI of the guest is the template's, named and placed.
func TestGuestVMI(t *testing.T) {
	g, err := ReadGuest(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	vmi := g.VMI(Namespace, "debian-1")
	if vmi.Name != "debian-1" || vmi.Namespace != Namespace || vmi.Kind != "VirtualMachineInstance" || vmi.Labels["app"] != "vm-debian" {
		t.Errorf("VMI %s/%s kind %q labels %v", vmi.Namespace, vmi.Name, vmi.Kind, vmi.Labels)
	}
	if len(vmi.Spec.Volumes) != len(g.Template.Spec.Volumes) || len(vmi.Spec.Domain.Devices.Disks) != 2 {
		t.Errorf("volumes %v, disks %v: want the template's", vmi.Spec.Volumes, vmi.Spec.Domain.Devices.Disks)
	}
	// A copy: changing the VMI leaves the template alone.
	vmi.Spec.Volumes[0].Name = "changed"
	vmi.Labels["app"] = "changed"
	if g.Template.Spec.Volumes[0].Name == "changed" || g.Template.ObjectMeta.Labels["app"] == "changed" {
		t.Error("the VMI shares the template's memory")
	}
}

func TestAuthorize(t *testing.T) {
	userData := func(s string) virtv1.Volume {
		return virtv1.Volume{Name: "cloudinit", VolumeSource: virtv1.VolumeSource{CloudInitNoCloud: &virtv1.CloudInitNoCloudSource{UserData: s}}}
	}
	const withPlaceholder = "#cloud-config\nusers:\n  - name: root2\n  - name: alice\n    ssh_authorized_keys:\n      - " + KeyPlaceholder + "\n"
	for _, tc := range []struct {
		name     string
		volumes  []virtv1.Volume
		wantUser string
		err      string
	}{
		{name: "the placeholder's user", volumes: []virtv1.Volume{userData(withPlaceholder)}, wantUser: "alice"},
		{name: "no cloud-init", err: "no cloudInitNoCloud volume"},
		{name: "two cloud-inits", volumes: []virtv1.Volume{userData(withPlaceholder), userData(withPlaceholder)}, err: "more than one"},
		{name: "no placeholder", volumes: []virtv1.Volume{userData("#cloud-config\nusers:\n  - name: alice\n    ssh_authorized_keys: [ssh-ed25519 AAAAother]\n")}, err: "no user of the user data has the key"},
		{name: "placeholder outside a user's keys", volumes: []virtv1.Volume{userData("#cloud-config\nruncmd:\n  - echo '" + KeyPlaceholder + "'\n")}, err: "no user of the user data has the key"},
		{name: "not YAML", volumes: []virtv1.Volume{userData("#cloud-config\nusers: [\n")}, err: "not a cloud-config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := &virtv1.VirtualMachineInstanceSpec{Volumes: tc.volumes}
			user, err := authorize(spec, "ssh-ed25519 AAAAbench")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if user != tc.wantUser {
				t.Errorf("user %q, want %q", user, tc.wantUser)
			}
			want := strings.ReplaceAll(withPlaceholder, KeyPlaceholder, "ssh-ed25519 AAAAbench")
			if got := spec.Volumes[0].CloudInitNoCloud.UserData; got != want {
				t.Errorf("user data\n%s\nwant\n%s", got, want)
			}
		})
	}
}
