package apipath

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"kubevirt.dev/virt/bench/load"
)

// dropFinalizers removes the finalizers virt-apiserver put on every VMI of
// the direct target's namespace, the job of the paused virt-controller, so that deleting
// the namespace removes them.
func dropFinalizers(ctx context.Context, direct Target, cfg *rest.Config, logf func(string, ...any)) error {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	gvr := schema.GroupVersionResource{Group: "virtualization.kubevirt.io", Version: "v1", Resource: "virtualmachineinstances"}
	list, err := mc.Resource(gvr).Namespace(direct.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list VMIs of %s: %w", direct.Namespace, err)
	}
	start := time.Now()
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	r := load.Run(ctx, cleanupClients, 0, len(list.Items), func(ctx context.Context, i int) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodPatch, direct.Base+direct.Collection+"/"+list.Items[i].Name, bytes.NewReader(patch))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/merge-patch+json")
		resp, err := direct.Client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
			return fmt.Errorf("patch %s: %s", list.Items[i].Name, resp.Status)
		}
		return nil
	})
	logf("api: removed the finalizers of %d VMIs of %s in %s", r.OK, direct.Namespace, time.Since(start).Round(time.Second))
	if r.Errors > 0 {
		return fmt.Errorf("remove finalizers: %d failed: %w", r.Errors, r.FirstError)
	}
	return nil
}
