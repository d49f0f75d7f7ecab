package compose

import (
	"fmt"
	"slices"
	"strings"
)

// Order returns the services in the order to start them: every service after the services
// it depends on, and services that do not depend on each other by name. A cycle is an
// [*Error] that lists it.
func (s *Stack) Order() ([]*Service, error) {
	const (
		unseen = iota
		visiting
		done
	)
	state := make(map[string]int, len(s.Services))
	var order []*Service
	var path []string
	var visit func(name string) error
	visit = func(name string) error {
		switch state[name] {
		case done:
			return nil
		case visiting:
			cycle := append(path[slices.Index(path, name):], name)
			return &Error{File: s.File, Service: name, Msg: "depends_on forms a cycle: " + strings.Join(cycle, " -> "),
				Fix: "remove one of these depends_on entries"}
		}
		sv, ok := s.Service(name)
		if !ok {
			return fmt.Errorf("compose: %s: no service %q", s.File, name)
		}
		state[name] = visiting
		path = append(path, name)
		for _, d := range sv.DependsOn {
			if err := visit(d.Service); err != nil {
				return err
			}
		}
		path = path[:len(path)-1]
		state[name] = done
		order = append(order, sv)
		return nil
	}
	for _, sv := range s.Services {
		if err := visit(sv.Name); err != nil {
			return nil, err
		}
	}
	return order, nil
}
