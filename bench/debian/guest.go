package debian

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// KeyPlaceholder is the authorized key the example's user data carries
// for its user to replace (artifacts/examples/vm-debian.yaml); the bench
// puts its own key there.
const KeyPlaceholder = "ssh-ed25519 AAAA... REPLACE-WITH-YOUR-KEY"

// Guest is what both sides boot: the example VM's instance template with
// the bench's key in its user data, and who logs in with that key.
type Guest struct {
	// Template is the example VM's spec.template, the bench's key in its
	// cloud-init user data.
	Template virtv1.VirtualMachineInstanceTemplateSpec
	// User is the user the key logs in as.
	User string
	// Signer is the key.
	Signer ssh.Signer
}

// ReadGuest reads the example VM from file, makes an ed25519 key for the
// run and puts it in place of KeyPlaceholder in the template's user data.
func ReadGuest(file string) (Guest, error) {
	f, err := os.Open(file)
	if err != nil {
		return Guest{}, fmt.Errorf("read the Debian VM: %w", err)
	}
	defer f.Close()
	var vm virtv1.VirtualMachine
	if err := yaml.NewYAMLOrJSONDecoder(f, 4096).Decode(&vm); err != nil {
		return Guest{}, fmt.Errorf("decode %s: %w", file, err)
	}
	if vm.Kind != "VirtualMachine" || vm.Spec.Template == nil {
		return Guest{}, fmt.Errorf("%s: not a VirtualMachine with a template (kind %q)", file, vm.Kind)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Guest{}, err
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return Guest{}, err
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return Guest{}, err
	}
	g := Guest{Template: *vm.Spec.Template.DeepCopy(), Signer: signer}
	if g.User, err = authorize(&g.Template.Spec, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub)))); err != nil {
		return Guest{}, fmt.Errorf("%s: %w", file, err)
	}
	return g, nil
}

// cloudConfig is the part of a cloud-config user data the bench reads.
type cloudConfig struct {
	Users []struct {
		Name string   `json:"name"`
		Keys []string `json:"ssh_authorized_keys"`
	} `json:"users"`
}

// authorize replaces KeyPlaceholder with key in the user data of spec's
// one cloudInitNoCloud volume, leaving every other byte as the example
// has it, and returns the user whose key it was.
func authorize(spec *virtv1.VirtualMachineInstanceSpec, key string) (string, error) {
	var src *virtv1.CloudInitNoCloudSource
	for _, v := range spec.Volumes {
		if v.CloudInitNoCloud != nil {
			if src != nil {
				return "", fmt.Errorf("more than one cloudInitNoCloud volume")
			}
			src = v.CloudInitNoCloud
		}
	}
	if src == nil || src.UserData == "" {
		return "", fmt.Errorf("no cloudInitNoCloud volume with plain userData to put the bench's key in")
	}
	var cfg cloudConfig
	if err := sigsyaml.Unmarshal([]byte(src.UserData), &cfg); err != nil {
		return "", fmt.Errorf("the user data is not a cloud-config: %w", err)
	}
	for _, u := range cfg.Users {
		if slices.Contains(u.Keys, KeyPlaceholder) {
			src.UserData = strings.ReplaceAll(src.UserData, KeyPlaceholder, key)
			return u.Name, nil
		}
	}
	return "", fmt.Errorf("no user of the user data has the key %q to replace", KeyPlaceholder)
}

// VMI is an instance of the guest's template called name in namespace, as
// the VM controller makes one: the template's labels, annotations and
// spec.
func (g Guest) VMI(namespace, name string) *virtv1.VirtualMachineInstance {
	t := g.Template.DeepCopy()
	return &virtv1.VirtualMachineInstance{
		TypeMeta: metav1.TypeMeta{APIVersion: virtv1.SchemeGroupVersion.String(), Kind: "VirtualMachineInstance"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: namespace,
			Labels: t.ObjectMeta.Labels, Annotations: t.ObjectMeta.Annotations,
		},
		Spec: t.Spec,
	}
}

// Memory is the guest's memory request, for the report.
func (g Guest) Memory() string {
	q, ok := g.Template.Spec.Domain.Resources.Requests[corev1.ResourceMemory]
	if !ok {
		return "the default"
	}
	return q.String()
}
