package apiserver

import (
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"

	"kubevirt.dev/virt/apiserver/registry/virtualmachineclusterinstancetype"
	"kubevirt.dev/virt/apiserver/registry/virtualmachineclusterpreference"
	"kubevirt.dev/virt/apiserver/registry/virtualmachineinstancetype"
	"kubevirt.dev/virt/apiserver/registry/virtualmachinepreference"
)

// instancetypeStorage is the storage of the four kinds a VM's
// spec.instancetype and spec.preference refer to.
type instancetypeStorage struct {
	instancetypes        *virtualmachineinstancetype.REST
	clusterInstancetypes *virtualmachineclusterinstancetype.REST
	preferences          *virtualmachinepreference.REST
	clusterPreferences   *virtualmachineclusterpreference.REST
}

func newInstancetypeStorage(optsGetter generic.RESTOptionsGetter) (*instancetypeStorage, error) {
	var s instancetypeStorage
	var err error
	if s.instancetypes, err = virtualmachineinstancetype.NewREST(Scheme, optsGetter); err != nil {
		return nil, err
	}
	if s.clusterInstancetypes, err = virtualmachineclusterinstancetype.NewREST(Scheme, optsGetter); err != nil {
		return nil, err
	}
	if s.preferences, err = virtualmachinepreference.NewREST(Scheme, optsGetter); err != nil {
		return nil, err
	}
	if s.clusterPreferences, err = virtualmachineclusterpreference.NewREST(Scheme, optsGetter); err != nil {
		return nil, err
	}
	return &s, nil
}

// storage maps each resource to its storage, for the API group.
func (s *instancetypeStorage) storage() map[string]rest.Storage {
	return map[string]rest.Storage{
		"virtualmachineinstancetypes":        s.instancetypes,
		"virtualmachineclusterinstancetypes": s.clusterInstancetypes,
		"virtualmachinepreferences":          s.preferences,
		"virtualmachineclusterpreferences":   s.clusterPreferences,
	}
}
