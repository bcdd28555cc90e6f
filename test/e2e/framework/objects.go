package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/generated/clientset/versioned/scheme"
)

// NamespaceDeleteTimeout bounds the wait for a test namespace to go.
const NamespaceDeleteTimeout = 2 * time.Minute

// Namespace creates a namespace for one test, deleted (and awaited) when
// the test ends.
func (c *Cluster) Namespace(t *testing.T) string {
	t.Helper()
	ns, err := c.Kube.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-", Labels: map[string]string{"virt.kubevirt.dev/e2e": "true"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create test namespace: %v", err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		err := c.Kube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete namespace %s: %v", ns.Name, err)
			return
		}
		err = WaitFor(ctx, NamespaceDeleteTimeout, "namespace "+ns.Name+" deleted", func(ctx context.Context) (bool, error) {
			_, err := c.Kube.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
		if err != nil {
			t.Error(err)
		}
	})
	return ns.Name
}

// Example reads a VMI manifest of artifacts/examples.
func (c *Cluster) Example(name string) (*virtv1.VirtualMachineInstance, error) {
	p := filepath.Join(c.Root, "artifacts", "examples", name)
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read example: %w", err)
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode %s: %w", p, err)
	}
	vmi, ok := obj.(*virtv1.VirtualMachineInstance)
	if !ok {
		return nil, fmt.Errorf("%s holds a %T, not a VirtualMachineInstance", p, obj)
	}
	return vmi, nil
}

// DeleteVMI deletes a VMI and waits until it is gone. Its finalizers are
// virt-controller's and virt-handler's to remove; where virt-controller is
// not deployed nothing would, so they are dropped here instead (and the
// test log says so).
func (c *Cluster) DeleteVMI(ctx context.Context, t *testing.T, ns, name string, timeout time.Duration) error {
	t.Helper()
	vmis := c.Virt.VirtualizationV1().VirtualMachineInstances(ns)
	if err := vmis.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("delete VMI %s/%s: %w", ns, name, err)
	}
	_, err := c.Kube.AppsV1().Deployments("virt-system").Get(ctx, "virt-controller", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		t.Logf("virt-controller is not deployed: dropping the finalizers of VMI %s/%s", ns, name)
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := vmis.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("drop finalizers of VMI %s/%s: %w", ns, name, err)
		}
	}
	return WaitFor(ctx, timeout, "VMI "+ns+"/"+name+" deleted", func(ctx context.Context) (bool, error) {
		vmi, err := vmis.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return false, fmt.Errorf("still there, phase %s, finalizers %v", vmi.Status.Phase, vmi.Finalizers)
	})
}
