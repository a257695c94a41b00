package placementfake

import (
	"net/http"
	"strings"
)

// endpoint is one method on one route. policy is the real policy rule name,
// used in 403 details; json means the body must be application/json.
type endpoint struct {
	policy string
	json   bool
	serve  func(*Server, *call)
}

type methods map[string]endpoint

// allow lists the methods for a 405's Allow header, in a fixed order.
func (m methods) allow() string {
	var out []string
	for _, name := range []string{"GET", "PUT", "POST", "DELETE"} {
		if _, ok := m[name]; ok {
			out = append(out, name)
		}
	}
	return strings.Join(out, ", ")
}

var (
	rootRoute = methods{"GET": {serve: (*Server).getRoot}}

	providersRoute = methods{
		"GET":  {policy: "resource_providers:list", serve: (*Server).listProviders},
		"POST": {policy: "resource_providers:create", json: true, serve: (*Server).createProvider},
	}
	providerRoute = methods{
		"GET":    {policy: "resource_providers:show", serve: (*Server).getProvider},
		"PUT":    {policy: "resource_providers:update", json: true, serve: (*Server).updateProvider},
		"DELETE": {policy: "resource_providers:delete", serve: (*Server).deleteProvider},
	}
	inventoriesRoute = methods{
		"GET":    {policy: "resource_providers:inventories:list", serve: (*Server).getInventories},
		"PUT":    {policy: "resource_providers:inventories:update", json: true, serve: (*Server).putInventories},
		"POST":   {policy: "resource_providers:inventories:create", json: true, serve: notImplemented},
		"DELETE": {policy: "resource_providers:inventories:delete", serve: (*Server).deleteInventories},
	}
	inventoryRoute = methods{
		"GET":    {policy: "resource_providers:inventories:show", serve: notImplemented},
		"PUT":    {policy: "resource_providers:inventories:update", json: true, serve: notImplemented},
		"DELETE": {policy: "resource_providers:inventories:delete", serve: notImplemented},
	}
	usagesRoute = methods{
		"GET": {policy: "resource_providers:usages", serve: (*Server).getUsages},
	}
	providerAllocationsRoute = methods{
		"GET": {policy: "resource_providers:allocations:list", serve: (*Server).getProviderAllocations},
	}
	providerTraitsRoute = methods{
		"GET":    {policy: "resource_providers:traits:list", serve: (*Server).getProviderTraits},
		"PUT":    {policy: "resource_providers:traits:update", json: true, serve: (*Server).putProviderTraits},
		"DELETE": {policy: "resource_providers:traits:delete", serve: (*Server).deleteProviderTraits},
	}
	aggregatesRoute = methods{
		"GET": {policy: "resource_providers:aggregates:list", serve: (*Server).getAggregates},
		"PUT": {policy: "resource_providers:aggregates:update", json: true, serve: (*Server).putAggregates},
	}
	classesRoute = methods{
		"GET":  {policy: "resource_classes:list", serve: (*Server).listClasses},
		"POST": {policy: "resource_classes:create", json: true, serve: notImplemented},
	}
	classRoute = methods{
		"GET": {policy: "resource_classes:show", serve: (*Server).getClass},
		"PUT": {policy: "resource_classes:update", serve: (*Server).putClass},
	}
	traitsRoute = methods{
		"GET": {policy: "traits:list", serve: (*Server).listTraits},
	}
	traitRoute = methods{
		"GET": {policy: "traits:show", serve: (*Server).getTrait},
		"PUT": {policy: "traits:update", serve: (*Server).putTrait},
	}
	allocationsRoute = methods{
		"POST": {policy: "allocations:manage", json: true, serve: notImplemented},
	}
	allocationRoute = methods{
		"GET":    {policy: "allocations:list", serve: (*Server).getAllocations},
		"PUT":    {policy: "allocations:update", json: true, serve: (*Server).putAllocations},
		"DELETE": {policy: "allocations:delete", serve: (*Server).deleteAllocations},
	}
)

// providerSubRoutes are the routes under /resource_providers/{uuid}/.
var providerSubRoutes = map[string]methods{
	"inventories": inventoriesRoute, "usages": usagesRoute,
	"allocations": providerAllocationsRoute, "traits": providerTraitsRoute,
	"aggregates": aggregatesRoute,
}

// lookup maps a path to its route and path parameters; nil means 404.
func lookup(path string) (methods, []string) {
	if path == "/" {
		return rootRoute, nil
	}
	p := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for _, part := range p {
		if part == "" {
			return nil, nil
		}
	}
	switch {
	case p[0] == "resource_providers" && len(p) == 1:
		return providersRoute, nil
	case p[0] == "resource_providers" && len(p) == 2:
		return providerRoute, p[1:]
	case p[0] == "resource_providers" && len(p) == 3:
		return providerSubRoutes[p[2]], p[1:2]
	case p[0] == "resource_providers" && len(p) == 4 && p[2] == "inventories":
		return inventoryRoute, []string{p[1], p[3]}
	case p[0] == "resource_classes" && len(p) <= 2:
		return pick(p, classesRoute, classRoute)
	case p[0] == "traits" && len(p) <= 2:
		return pick(p, traitsRoute, traitRoute)
	case p[0] == "allocations" && len(p) <= 2:
		return pick(p, allocationsRoute, allocationRoute)
	case p[0] == "reshaper" && len(p) == 1:
		return reshaperRoute, nil
	case p[0] == "usages" && len(p) == 1:
		return totalUsagesRoute, nil
	}
	return nil, nil
}

func pick(p []string, collection, item methods) (methods, []string) {
	if len(p) == 1 {
		return collection, nil
	}
	return item, p[1:]
}

func notImplemented(_ *Server, c *call) {
	c.fail(http.StatusNotImplemented, "", "placementfake: "+c.r.Method+" "+c.r.URL.Path+" is not implemented")
}

func (s *Server) getRoot(c *call) {
	c.reply(http.StatusOK, map[string]any{"versions": []map[string]any{{
		"id": "v1.0", "max_version": "1.39", "min_version": "1.0", "status": "CURRENT",
		"links": []map[string]string{{"rel": "self", "href": ""}},
	}}})
}
