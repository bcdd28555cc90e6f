package fieldownership

import (
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
	"k8s.io/apiserver/pkg/authentication/user"

	"kubevirt.dev/virt/apiserver/admission/noderestriction"
	"kubevirt.dev/virt/internal/ownership"
)

// Identities say which credentials are which component.
type Identities struct {
	// HandlerServiceAccounts (names, any namespace) and HandlerUsers are
	// virt-handler: the Handler of the node their credentials name.
	HandlerServiceAccounts, HandlerUsers []string
	// ControllerServiceAccounts (names, any namespace) are virt-controller.
	ControllerServiceAccounts []string
}

// DefaultControllerServiceAccounts is virt-controller's service account in
// a default installation.
var DefaultControllerServiceAccounts = []string{"virt-controller"}

// controllerWriters are the controllers of virt-controller, which share its
// credentials.
var controllerWriters = []ownership.Writer{ownership.VMIController, ownership.NodeHealth,
	ownership.ReplicaSetController, ownership.VMController, ownership.MigrationController}

// handlerWriters are a node's virt-handler: of the VMIs on its node, and of
// those migrating to it.
var handlerWriters = []ownership.Writer{ownership.Handler, ownership.MigrationTarget}

// identity is who a request's user is to the tables.
type identity struct {
	// name is the user's name, for refusals.
	name string
	// writers are the rows the user may write by; none: not a component.
	writers []ownership.Writer
	// node is the node of a handler's credentials.
	node string
}

type matcher struct {
	handlerSAs, handlerUsers, controllerSAs sets.Set[string]
}

func (ids Identities) matcher() matcher {
	return matcher{sets.New(ids.HandlerServiceAccounts...), sets.New(ids.HandlerUsers...), sets.New(ids.ControllerServiceAccounts...)}
}

// identify maps u to its writers.
func (m matcher) identify(u user.Info) identity {
	id := identity{name: u.GetName()}
	_, sa, err := serviceaccount.SplitUsername(u.GetName())
	isSA := err == nil
	switch {
	case m.handlerUsers.Has(u.GetName()), isSA && m.handlerSAs.Has(sa):
		id.writers = handlerWriters
		if nodes := u.GetExtra()[noderestriction.NodeNameExtra]; len(nodes) == 1 {
			id.node = nodes[0]
		}
	case isSA && m.controllerSAs.Has(sa):
		id.writers = controllerWriters
	}
	return id
}
