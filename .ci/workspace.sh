# Sourced by .ci/run and .ci/tidy, from the repository's root.

# replacements prints "path version dir" for each version-pinned `path version => dir` line of
# go.work: the unreleased versions of levee's modules that the workspace's copies stand for.
replacements() {
  awk '
    /^replace[ \t]*\(/      { block = 1; next }
    block && /^\)/          { block = 0; next }
    block && /=>/           { print $1, $2, $4; next }
    /^replace[ \t]/ && /=>/ { print $2, $3, $5 }
  ' go.work
}

# go_directive prints the go directive of the go.mod in directory $1.
go_directive() {
  awk '$1 == "go" { print $2; exit }' "$1/go.mod"
}

# absolute prints the absolute path of directory $1, relative to the repository's root.
absolute() {
  (cd "$1" && pwd)
}

# workspace_dirs prints the directory of each module of go.work's use lines, relative to the
# repository's root and without "./" ("." for the root).
workspace_dirs() {
  awk '
    /^use[ \t]*\(/ { block = 1; next }
    block && /^\)/  { block = 0; next }
    block && NF     { print $1; next }
    /^use[ \t]/     { print $2 }
  ' go.work | sed -e 's|^\./||' -e 's|^$|.|' -e 's|/$||'
}
