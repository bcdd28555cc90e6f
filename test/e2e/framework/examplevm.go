package framework

import (
	"fmt"
	"os"
	"path/filepath"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/generated/clientset/versioned/scheme"
)

// ExampleVM reads a VirtualMachine manifest of artifacts/examples.
func (c *Cluster) ExampleVM(name string) (*virtv1.VirtualMachine, error) {
	p := filepath.Join(c.Root, "artifacts", "examples", name)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read example: %w", err)
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", p, err)
	}
	vm, ok := obj.(*virtv1.VirtualMachine)
	if !ok {
		return nil, fmt.Errorf("%s holds a %T, not a VirtualMachine", p, obj)
	}
	return vm, nil
}
