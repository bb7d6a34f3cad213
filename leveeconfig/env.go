package leveeconfig

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// envPrefix starts every variable the loader reads, as Spring's relaxed binding of
// resilience4j.* properties from the environment.
const envPrefix = "RESILIENCE4J_"

// leveeEnvPrefix starts the variables of levee's own sections (levee.adaptive, ...):
// LEVEE_ADAPTIVE_INSTANCES_CHECKOUT_MAXLIMIT. A LEVEE_ variable naming none of them is left
// alone, being someone else's.
const leveeEnvPrefix = "LEVEE_"

// env applies the variables of environ ("NAME=value") that start with RESILIENCE4J_, after
// the file, as Spring Boot's environment overrides an application.yml:
//
//	RESILIENCE4J_CIRCUITBREAKER_INSTANCES_PAYMENT_SLIDINGWINDOWSIZE=20
//	RESILIENCE4J_RETRY_CONFIGS_DEFAULT_RETRYEXCEPTIONS=demo.r4j.GatewayException,java.io.IOException
//	RESILIENCE4J_RETRY_RETRYASPECTORDER=1
//	RESILIENCE4J_BULKHEAD_TAGS_TEAM=checkout
//
// The variable is <prefix>_<SECTION>_<INSTANCES|CONFIGS>_<NAME>_<KEY>, in upper case without
// dashes; NAME (which may hold underscores) matches a name of the file whatever its case,
// dashes and underscores, and is lower-cased otherwise, as Spring binds it. A list is
// comma-separated, or given by index with the index between underscores, Spring's rule for an
// indexed property in a variable (RESILIENCE4J_RETRY_INSTANCES_PAYMENT_RETRYEXCEPTIONS_0 is
// retryExceptions[0]); as in Spring, a list from the environment replaces the file's whole.
func (ps *parser) env(environ []string) {
	ps.origin++ // the environment is one source
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		root, prefix := "resilience4j", envPrefix
		if strings.HasPrefix(name, leveeEnvPrefix) {
			root, prefix = "levee", leveeEnvPrefix
		} else if !strings.HasPrefix(name, envPrefix) {
			continue
		}
		src := Source{Env: name}
		segs := strings.Split(strings.TrimPrefix(name, prefix), "_")
		sec, rest := ps.envSection(segs, root)
		if sec == nil && root == "levee" {
			continue // LEVEE_* variables of other meanings: only levee's sections are read
		}
		if sec == nil {
			ps.fail(src, "", "names no section of resilience4j: levee reads %s", sectionKeys("resilience4j"))
			continue
		}
		prefix = strings.ToUpper(root) + "_"
		node := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: val}
		switch {
		case len(rest) >= 3 && (rest[0] == "INSTANCES" || rest[0] == "CONFIGS"):
			into, group := sec.instances, "instances"
			if rest[0] == "CONFIGS" {
				into, group = sec.configs, "configs"
			}
			key := rest[len(rest)-1]
			if last := len(rest) - 1; len(rest) >= 4 && isDigits(rest[last]) {
				if sp, ok := spec(sec.spec.pattern, norm(rest[last-1])); ok && sp.kind == kList {
					// Spring's form of an index in a variable: the index between underscores.
					key = rest[last-1] + "[" + rest[last] + "]"
					rest = rest[:last]
				}
			}
			written := strings.Join(rest[1:len(rest)-1], "_")
			var e *entry
			for n, cand := range into {
				if norm(n) == norm(written) {
					e = cand
				}
			}
			if e == nil {
				n := strings.ToLower(written)
				e = &entry{name: n, path: join(sec.prefix, group+"."+n), src: src, props: props{}}
				into[n] = e
			}
			ps.key(sec.spec.pattern, e, key, e.path, src, node)
		case len(rest) == 2 && rest[0] == "TAGS":
			sec.tags[strings.ToLower(rest[1])] = val
		case len(rest) == 1 && sec.spec.order != "" && rest[0] == strings.ToUpper(sec.spec.order):
			sec.order = &value{path: join(sec.prefix, sec.spec.order), spec: keySpec{name: sec.spec.order, kind: kInt}, scalar: val, src: src}
		default:
			ps.fail(src, "", "names no key of %s.%s: use %[3]s%[4]s_INSTANCES_<NAME>_<KEY> or %[3]s%[4]s_CONFIGS_<NAME>_<KEY>",
				root, sec.spec.key, prefix, envSectionName(sec.spec))
		}
	}
}

func envSectionName(s sectionSpec) string {
	return strings.ToUpper(strings.ReplaceAll(s.key, "-", ""))
}

// envSection finds the section a variable's segments start with: THREADPOOLBULKHEAD or
// THREAD_POOL_BULKHEAD for the thread-pool bulkhead.
func (ps *parser) envSection(segs []string, root string) (*rawSection, []string) {
	for i := 1; i <= len(segs) && i <= 3; i++ {
		folded := norm(strings.Join(segs[:i], ""))
		for _, s := range sections {
			if s.root == root && norm(s.key) == folded {
				return ps.sections[s.pattern], segs[i:]
			}
		}
	}
	return nil, nil
}
