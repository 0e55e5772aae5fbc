#!/bin/bash
# The P6 workspace rows of `make bench`: a generated 20,000-file tree (200
# dirs x 100 files of ~1 KiB) and the same 200 changes (100 modified, 50
# added, 50 deleted) captured by cloister or by git.
#   ws.sh setup DIR | change TREE | git DIR | reset DIR
set -eu
cmd=$1 d=$2
gen() {  # tree
	local i j
	mkdir -p "$1"
	for i in $(seq -w 0 199); do
		mkdir -p "$1/d$i"
		for j in $(seq -w 0 99); do
			printf 'file %s/%s\n%1000s\n' "$i" "$j" "" >"$1/d$i/f$j.txt"
		done
	done
}
repo() {  # tree -> a git repo with the tree committed
	git -C "$1" init -q
	git -C "$1" add -A
	git -C "$1" -c user.name=bench -c user.email=bench@localhost commit -qm base
}
case $cmd in
setup)
	gen "$d/tree"
	cp -a "$d/tree" "$d/git" && repo "$d/git"
	cp -a "$d/tree" "$d/apply" && repo "$d/apply"
	;;
change)
	for i in $(seq 0 99); do echo changed >>"$d/d$(printf %03d "$i")/f00.txt"; done
	for i in $(seq 100 149); do echo new >"$d/d$i/new.txt"; done
	for i in $(seq 150 199); do rm "$d/d$i/f00.txt"; done
	;;
git)
	cd "$d/git"
	"$0" change .
	git add -A
	git diff --cached >/dev/null
	;;
reset)
	for r in git apply; do
		git -C "$d/$r" reset -q --hard
		git -C "$d/$r" clean -qfd
	done
	;;
*) echo "usage: ws.sh setup DIR | change TREE | git DIR | reset DIR" >&2; exit 2 ;;
esac
