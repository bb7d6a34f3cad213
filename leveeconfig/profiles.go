package leveeconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// doc is one document of a file, decoded.
type doc struct {
	file        string
	root        *yaml.Node // a mapping
	profileFile bool       // the file is application-{profile}.*
	// onProfile is the document's spring.config.activate.on-profile value and key, nil for
	// none.
	onProfile, onProfileKey *yaml.Node
}

// springProp is one spring.* property of a document, as written: its dotted path folded
// (spring.profiles.active, spring.profiles.include[0]), its key node and its value node.
type springProp struct {
	path string
	key  *yaml.Node
	val  *yaml.Node
}

// springProps lists the spring.* properties of a document, written nested, dotted or mixed.
func springProps(root *yaml.Node) []springProp {
	var out []springProp
	var walk func(n *yaml.Node, path string, depth int)
	walk = func(n *yaml.Node, path string, depth int) {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		}
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			segs, ok := splitKey(k.Value)
			if !ok {
				continue
			}
			p := path
			for _, s := range segs {
				if m := indexedKey.FindStringSubmatch(s); m != nil {
					p = join(p, norm(m[1])+"["+m[2]+"]")
				} else {
					p = join(p, norm(s))
				}
			}
			if depth == 0 && p != "spring" && !strings.HasPrefix(p, "spring.") {
				continue
			}
			if v.Kind == yaml.MappingNode && depth < 6 {
				walk(v, p, depth+1)
				continue
			}
			out = append(out, springProp{path: p, key: k, val: v})
		}
	}
	walk(root, "", 0)
	return out
}

// The spring.* properties the loader reads, folded as springProps folds them.
const (
	propOnProfile = "spring.config.activate.onprofile"
	propActive    = "spring.profiles.active"
	propInclude   = "spring.profiles.include"
	propDefault   = "spring.profiles.default"
	propGroup     = "spring.profiles.group"
	propLegacy    = "spring.profiles"
)

// springNames are the properties as Spring writes them, for errors.
var springNames = map[string]string{
	propActive: "spring.profiles.active", propInclude: "spring.profiles.include",
	propDefault: "spring.profiles.default", propGroup: "spring.profiles.group",
}

// profileList is the value of a list property (spring.profiles.active) in props: a
// comma-separated scalar, a YAML list, or Spring's indexed form (name[0], name[1], ...). ok
// is false when props do not set it.
func profileList(props []springProp, name string) (list []string, at *yaml.Node, ok bool) {
	indexed := map[int]string{}
	for _, p := range props {
		switch {
		case p.path == name && p.val.Kind == yaml.SequenceNode:
			for _, item := range p.val.Content {
				list = append(list, splitProfiles(item.Value)...)
			}
			return list, p.key, true
		case p.path == name:
			return splitProfiles(p.val.Value), p.key, true
		case strings.HasPrefix(p.path, name+"["):
			if i, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p.path, name+"["), "]")); err == nil {
				indexed[i] = p.val.Value
				if at == nil {
					at = p.key
				}
			}
		}
	}
	if at == nil {
		return nil, nil, false
	}
	for _, i := range slices.Sorted(maps.Keys(indexed)) {
		list = append(list, splitProfiles(indexed[i])...)
	}
	return list, at, true
}

// splitProfiles reads a comma-separated list of profiles, spaces trimmed, as Spring's
// StringUtils.commaDelimitedListToSet after trimAllWhitespace.
func splitProfiles(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// envList reads a comma-separated variable of environ, the last one set winning.
func envList(environ []string, name string) ([]string, bool) {
	var out []string
	found := false
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			out, found = splitProfiles(v), true
		}
	}
	return out, found
}

// profiles works out the active profiles as Spring Boot does, from the caller's
// Options.Profiles, the environment and the documents of the main file:
//
//   - spring.profiles.active is the highest source's: Options.Profiles, else
//     SPRING_PROFILES_ACTIVE, else the file's (a later document over an earlier one);
//   - spring.profiles.include (and SPRING_PROFILES_INCLUDE) adds profiles whatever the
//     source of the active ones, before them (so the active ones' files are read later and
//     win): the environment's first, then the file's documents in order;
//   - with neither, spring.profiles.default (SPRING_PROFILES_DEFAULT, else the file's) or
//     else "default" is the one active profile;
//   - spring.profiles.group.NAME lists the profiles a profile brings with it, each right
//     after it.
//
// These keys are refused in a document with spring.config.activate.on-profile and in a
// profile-specific file, as Spring refuses them; so is Spring Boot 2.3's spring.profiles
// document key, which Spring 2.4 and later refuse.
func (ps *parser) profilesOf(docs []doc, opts Options, environ []string) []string {
	var active, defaults, include []string
	defaultSet := false
	groups := map[string][]string{}
	for _, d := range docs {
		props := springProps(d.root)
		ps.file = d.file
		ps.refuseLegacy(props)
		if d.onProfile != nil || d.profileFile {
			ps.refuseProfileKeys(d, props)
			continue
		}
		if l, _, ok := profileList(props, propActive); ok {
			active = l
		}
		if l, _, ok := profileList(props, propDefault); ok {
			defaults, defaultSet = l, true
		}
		if l, _, ok := profileList(props, propInclude); ok {
			include = append(include, l...)
		}
		for _, p := range props {
			if name, ok := strings.CutPrefix(p.path, propGroup+"."); ok {
				name = strings.TrimSuffix(name, indexSuffix(name))
				l, _, _ := profileList(props, propGroup+"."+name)
				groups[name] = l
			}
		}
	}
	if l, ok := envList(environ, "SPRING_PROFILES_ACTIVE"); ok {
		active = l
	}
	if opts.Profiles != nil {
		active = opts.Profiles
	}
	if l, ok := envList(environ, "SPRING_PROFILES_DEFAULT"); ok {
		defaults, defaultSet = l, true
	}
	envInclude, _ := envList(environ, "SPRING_PROFILES_INCLUDE")
	var out []string
	for _, p := range slices.Concat(envInclude, include, active) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		out = []string{"default"}
		if defaultSet && len(defaults) > 0 {
			out = defaults
		}
	}
	return expandGroups(out, groups)
}

// expandGroups puts after each profile the profiles of its group, recursively, each once, as
// Spring's Profiles.expandProfiles.
func expandGroups(profiles []string, groups map[string][]string) []string {
	var out []string
	var add func(p string)
	add = func(p string) {
		if slices.Contains(out, p) {
			return
		}
		out = append(out, p)
		for _, g := range groups[p] {
			add(g)
		}
	}
	for _, p := range profiles {
		add(p)
	}
	return out
}

// refuseProfileKeys refuses the profile keys in a profile-specific document: "The
// spring.profiles.active and spring.profiles.default properties can only be used in
// non-profile-specific documents. This means they cannot be included in profile specific
// files or documents activated by spring.config.activate.on-profile" (Spring Boot's
// reference, Profiles), and the same of spring.profiles.include and spring.profiles.group.
func (ps *parser) refuseProfileKeys(d doc, props []springProp) {
	for _, p := range props {
		for _, name := range []string{propActive, propInclude, propDefault, propGroup} {
			if p.path != name && !strings.HasPrefix(p.path, name+"[") && !strings.HasPrefix(p.path, name+".") {
				continue
			}
			if d.profileFile {
				ps.fail(ps.at(p.key), springNames[name], "invalid in a profile-specific file (%s), as in Spring: "+
					"set it in %s or in the environment", d.file, "the main file")
			} else {
				ps.fail(ps.at(p.key), springNames[name], "invalid in a document activated by spring.config.activate.on-profile "+
					"(line %d), as in Spring: set it in a document without on-profile, or in the environment", d.onProfileKey.Line)
			}
		}
	}
}

// refuseLegacy refuses Spring Boot 2.3's document key spring.profiles (a profile name or
// list), which Spring Boot 2.4 and later refuse naming its replacement.
func (ps *parser) refuseLegacy(props []springProp) {
	for _, p := range props {
		if p.path == propLegacy || strings.HasPrefix(p.path, propLegacy+"[") {
			ps.fail(ps.at(p.key), "spring.profiles", "invalid, as in Spring Boot 2.4 and later: "+
				"replace it with spring.config.activate.on-profile")
		}
	}
}

// profileExtensions are the extensions of a location's files, from the lowest precedence to
// the highest, as Spring Boot reads them: "If you have configuration files with both
// .properties and YAML format in the same location, .properties takes precedence" (Spring
// Boot's reference, External Application Properties); between the two YAML extensions,
// .yml (listed first by Spring's YamlPropertySourceLoader) takes precedence over .yaml.
var profileExtensions = []string{".yaml", ".yml", ".properties"}

// siblings returns the profile-specific files of base (a path without its extension, such
// as dir/application) for profile, in the order to read them, lowest precedence first,
// those that exist: base-profile.yaml, .yml and .properties, and with the main file's own
// extension ext when it is none of these (.json) first.
func siblings(base, ext, profile string) ([]file, error) {
	exts := profileExtensions
	if ext != "" && !slices.Contains(exts, ext) {
		exts = slices.Concat([]string{ext}, exts)
	}
	var out []file
	for _, e := range exts {
		name := base + "-" + profile + e
		data, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("leveeconfig: %w", err)
		}
		out = append(out, file{name: name, data: data, profile: true})
	}
	return out, nil
}

// mainFiles returns the main files of path: the file itself, or, for a directory, its
// application.yaml, application.yml and application.properties, lowest precedence first,
// as a Spring Boot location directory; base is the path of the files without extension.
func mainFiles(path string) (files []file, base, ext string, err error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", "", fmt.Errorf("leveeconfig: %w", err)
	}
	if !st.IsDir() {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, "", "", fmt.Errorf("leveeconfig: %w", err)
		}
		ext = filepath.Ext(path)
		return []file{{name: path, data: data}}, strings.TrimSuffix(path, ext), ext, nil
	}
	base = filepath.Join(path, "application")
	for _, e := range profileExtensions {
		data, err := os.ReadFile(base + e)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", "", fmt.Errorf("leveeconfig: %w", err)
		}
		files = append(files, file{name: base + e, data: data})
	}
	if len(files) == 0 {
		return nil, "", "", fmt.Errorf("leveeconfig: %s holds no application.properties, application.yml or application.yaml", path)
	}
	return files, base, "", nil
}

// profileMatch is a parsed profile expression: whether it accepts the active profiles.
type profileMatch func(active []string) bool

// parseProfileExpr parses one of Spring's profile expressions, as Spring's ProfilesParser:
// a profile name, "!name", "a & b", "a | b" and parentheses ("(a & b) | c", "prod & !eu");
// & and | may not be mixed without parentheses ("a & b | c" is malformed, as in Spring).
func parseProfileExpr(expr string) (profileMatch, error) {
	var toks []string
	for rest := expr; rest != ""; {
		i := strings.IndexAny(rest, "()&|!")
		if i < 0 {
			toks = append(toks, rest)
			break
		}
		toks = append(toks, rest[:i], rest[i:i+1])
		rest = rest[i+1:]
	}
	var clean []string
	for _, t := range toks {
		if t = strings.TrimSpace(t); t != "" {
			clean = append(clean, t)
		}
	}
	if len(clean) == 0 {
		return nil, fmt.Errorf("an empty profile expression")
	}
	p := &exprParser{toks: clean}
	m, err := p.parse(ctxTop)
	if err == nil && p.pos < len(p.toks) {
		err = errMalformed
	}
	if err != nil {
		return nil, fmt.Errorf("profile expression %q is malformed, as Spring reads it: write names joined by & or by | "+
			"(parentheses to mix them), each maybe with !", expr)
	}
	return m, nil
}

var errMalformed = errors.New("malformed")

type exprContext int

const (
	ctxTop exprContext = iota
	ctxParen
	ctxNegate
)

type exprParser struct {
	toks []string
	pos  int
}

// parse is Spring's ProfilesParser.parseTokens.
func (p *exprParser) parse(ctx exprContext) (profileMatch, error) {
	var elems []profileMatch
	op := ""
	dangling := false // an operator without its right operand yet
	for p.pos < len(p.toks) {
		tok := p.toks[p.pos]
		p.pos++
		switch tok {
		case "(":
			m, err := p.parse(ctxParen)
			if err != nil {
				return nil, err
			}
			if ctx == ctxNegate {
				return m, nil
			}
			if len(elems) > 0 && !dangling {
				return nil, errMalformed // two operands without an operator
			}
			elems, dangling = append(elems, m), false
		case "&", "|":
			if op != "" && op != tok || len(elems) == 0 || dangling {
				return nil, errMalformed // mixed, leading or doubled operators
			}
			op, dangling = tok, true
			continue
		case "!":
			m, err := p.parse(ctxNegate)
			if err != nil {
				return nil, err
			}
			if len(elems) > 0 && !dangling {
				return nil, errMalformed
			}
			elems, dangling = append(elems, func(a []string) bool { return !m(a) }), false
		case ")":
			if dangling {
				return nil, errMalformed
			}
			m, err := merge(elems, op)
			if err != nil {
				return nil, err
			}
			if ctx == ctxParen {
				return m, nil
			}
			if ctx == ctxTop {
				return nil, errMalformed // an unopened parenthesis
			}
			elems, op = []profileMatch{m}, ""
		default:
			name := tok
			m := profileMatch(func(a []string) bool { return slices.Contains(a, name) })
			if ctx == ctxNegate {
				return m, nil
			}
			if len(elems) > 0 && !dangling {
				return nil, errMalformed
			}
			elems, dangling = append(elems, m), false
		}
	}
	if ctx == ctxParen || dangling {
		return nil, errMalformed // an unclosed parenthesis, a trailing operator
	}
	return merge(elems, op)
}

func merge(elems []profileMatch, op string) (profileMatch, error) {
	switch {
	case len(elems) == 0:
		return nil, errMalformed
	case len(elems) == 1:
		return elems[0], nil
	case op == "&":
		return func(a []string) bool {
			for _, m := range elems {
				if !m(a) {
					return false
				}
			}
			return true
		}, nil
	}
	return func(a []string) bool {
		for _, m := range elems {
			if m(a) {
				return true
			}
		}
		return false
	}, nil
}
