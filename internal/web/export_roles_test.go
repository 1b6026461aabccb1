package web

// RouteNeed is what routeNeeds declares for a route ("public", "account",
// "site", "viewer", "editor" or "owner"), for the external tests; method
// "*" names a route of every method.
func RouteNeed(method, pattern string) (string, bool) {
	n, ok := routeNeeds[method+" "+pattern]
	return map[need]string{needPublic: "public", needAccount: "account", needSiteAdmin: "site",
		needViewer: "viewer", needEditor: "editor", needOwner: "owner"}[n], ok
}

// RouteNeedCount is how many routes routeNeeds declares.
func RouteNeedCount() int { return len(routeNeeds) }
