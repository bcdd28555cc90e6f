package noderestriction

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"kubevirt.dev/virt/apis/virtualization"
)

// AuthorizerName names the read restriction in an authorizer union.
const AuthorizerName = "VirtNodeRestriction"

// nodeNameField is the VMI field selector a node daemon lists and watches
// its node's VMIs by (virt-apiserver indexes it).
const nodeNameField = "status.nodeName"

// targetNodeField is the one it lists and watches the VMIs migrating to its
// node by.
const targetNodeField = "status.migrationState.targetNode"

// NewReadAuthorizer returns the authorizer that confines a node-restricted
// identity's list and watch of VMIs to its node: the request must select
// status.nodeName=<its node> (or status.migrationState.targetNode=<its
// node>, the VMIs migrating to it), or it is denied. Reads reach no admission, so
// the admission plugin cannot do this, and RBAC has no field selectors. It
// has no opinion on anything else: put it before the authorizer that grants
// (RBAC through the delegated one), which still decides those requests.
func NewReadAuthorizer(ids Identities) authorizer.Authorizer {
	m := ids.matcher()
	return authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		if !a.IsResourceRequest() || a.GetAPIGroup() != virtualization.GroupName ||
			a.GetResource() != "virtualmachineinstances" || a.GetSubresource() != "" ||
			(a.GetVerb() != "list" && a.GetVerb() != "watch") || !m.restricted(a.GetUser()) {
			return authorizer.DecisionNoOpinion, "", nil
		}
		node := node(a.GetUser())
		if node == "" {
			return authorizer.DecisionDeny, fmt.Sprintf("%s is node-restricted, but its credentials name no node (%s)", a.GetUser().GetName(), NodeNameExtra), nil
		}
		requirements, err := a.GetFieldSelector()
		if err != nil {
			return authorizer.DecisionDeny, fmt.Sprintf("node %q: unreadable field selector: %v", node, err), nil
		}
		for _, r := range requirements {
			if (r.Field == nodeNameField || r.Field == targetNodeField) && (r.Operator == selection.Equals || r.Operator == selection.DoubleEquals) && r.Value == node {
				return authorizer.DecisionNoOpinion, "", nil
			}
		}
		return authorizer.DecisionDeny, fmt.Sprintf("node %q may %s VirtualMachineInstances only with the field selector %s=%s or %s=%s",
			node, a.GetVerb(), nodeNameField, node, targetNodeField, node), nil
	})
}
