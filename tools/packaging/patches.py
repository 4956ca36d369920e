"""The full layer's declared patches to its own SDK: layer/patches/<distribution>/NNNN-<what>.patch.

Each file is a header (``Subject:`` one line, ``Why:`` continued on indented lines) and a unified
diff against the pinned wheel's files, paths relative to the install folder (``a/botocore/utils.py``).
``apply_all`` applies every patch, in (distribution, file name) order, to the staged tree right after
uv installed the wheels (tools/packaging/build_layer.py), then rewrites the RECORD line of each file
it changed (sha256, size), so that ``pip show -f``/installers' checks see the shipped bytes; before
that, each changed file gets at its end the notice Apache-2.0 section 4(b) asks of a modified file
(``change_notice``: the patches that changed it).  The SBOM (tools/release/sbom.py) declares each
patch under its component's ``pedigree.patches``.

Applying is strict, with no fuzz: every hunk's context and removed lines must be the file's lines at
the hunk's position, and a file must not change twice in one run unless the diff says so.  A patch
that no longer fits (a new pin moved the code: ``make bump-sdk``) stops the build, naming the patch,
the file and the first line that differs: nothing is shipped half-patched.  Stdlib only, like the build.
"""

import base64
import csv
import hashlib
import io
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATCHES_DIR = os.path.join(REPO, "layer", "patches")
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class PatchError(Exception):
    """A patch that does not apply to the tree as it is."""


def load(patches_dir=PATCHES_DIR):
    """[{'distribution', 'name', 'path', 'subject', 'why', 'text', 'files'}] of every patch, sorted by
    distribution then file name (the order they apply in)."""
    found = []
    if not os.path.isdir(patches_dir):
        return found
    for distribution in sorted(os.listdir(patches_dir)):
        folder = os.path.join(patches_dir, distribution)
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".patch"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8", newline="") as handle:
                text = handle.read()
            subject, why = header(text, path)
            files = [diff_path(line) for line in text.splitlines() if line.startswith("+++ ")]
            if not files:
                raise PatchError("%s: no diff" % path)
            found.append({"distribution": distribution, "name": name, "path": path, "subject": subject,
                          "why": why, "text": text, "files": files})
    return found


def header(text, path):
    """(subject, why) from a patch's header: ``Subject:`` and ``Why:`` (continuation lines start with
    a space), both required."""
    fields, current = {}, None
    for line in text.split("\n--- ", 1)[0].splitlines():
        match = re.match(r"([A-Za-z-]+): ?(.*)$", line)
        if match:
            current = match.group(1).lower()
            fields[current] = match.group(2).strip()
        elif line.startswith(" ") and current:
            fields[current] += " " + line.strip()
    if not fields.get("subject") or not fields.get("why"):
        raise PatchError("%s: the header needs a Subject: and a Why: line" % path)
    return fields["subject"], fields["why"]


def diff_path(line):
    """``a/botocore/utils.py`` (or b/) -> ``botocore/utils.py``."""
    path = line[4:].split("\t")[0].strip()
    return path[2:] if path.startswith(("a/", "b/")) else path


def file_diffs(text):
    """[(relative path, [(old start, old count, [hunk lines])])] of a unified diff."""
    diffs, lines = [], text.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        if lines[index].startswith("--- ") and index + 1 < len(lines) and lines[index + 1].startswith("+++ "):
            hunks = []
            diffs.append((diff_path(lines[index + 1]), hunks))
            index += 2
            continue
        match = HUNK.match(lines[index])
        if match and diffs:
            old_count = int(match.group(2) if match.group(2) is not None else 1)
            new_count = int(match.group(4) if match.group(4) is not None else 1)
            body, seen_old, seen_new = [], 0, 0
            index += 1
            while index < len(lines) and (seen_old < old_count or seen_new < new_count):
                line = lines[index]
                if line.startswith("\\"):  # "\ No newline at end of file"
                    index += 1
                    continue
                body.append(line)
                seen_old += line[:1] in (" ", "-")
                seen_new += line[:1] in (" ", "+")
                index += 1
            hunks.append((int(match.group(1)), old_count, body))
            continue
        index += 1
    return diffs


def _fits(lines, at, body):
    """Whether every context and removed line of a hunk's ``body`` is ``lines``' line at ``at`` on."""
    old = [line[1:] for line in body if line[:1] in (" ", "-")]
    return lines[at:at + len(old)] == old


def apply_to_lines(lines, hunks, where, allow_offset=False):
    """``lines`` (with their newlines) with ``hunks`` applied; raises PatchError on any mismatch.

    ``allow_offset``: a hunk whose lines are not at its stated line may apply where they are, the
    nearest such place after the previous hunk (GNU patch's "offset", never its fuzz: every line
    still has to be the file's).  Only bench/sdk_patches.py asks for it, to apply a patch without
    the earlier ones it was made after (each lever alone); the build never does."""
    result, position, shift = [], 0, 0
    for start, count, body in hunks:
        stated = start - 1 if count else start
        at = stated + shift
        if allow_offset and not _fits(lines, at, body):
            places = sorted(range(position, len(lines) + 1), key=lambda place: abs(place - at))
            at = next((place for place in places if _fits(lines, place, body)), at)
            shift = at - stated
        if at < position:
            raise PatchError("%s: hunks overlap or are out of order at line %d" % (where, start))
        result.extend(lines[position:at])
        position = at
        for line in body:
            kind, content = line[:1], line[1:]
            if kind in (" ", "-"):
                actual = lines[position] if position < len(lines) else "<end of file>"
                if actual != content:
                    raise PatchError("%s: line %d is %r, the patch expects %r (does the patch match the "
                                     "pinned version?)" % (where, position + 1, actual, content))
                position += 1
                if kind == " ":
                    result.append(content)
            elif kind == "+":
                result.append(content)
            else:
                raise PatchError("%s: unexpected diff line %r" % (where, line))
    result.extend(lines[position:])
    return result


def replace_file(path, text):
    """Give ``path`` the content ``text`` as a new file (written beside it, then renamed over it),
    never by writing into the old one: uv installs by hard link from its cache by default, so an
    installed file may be the cache's own inode, shared with every other install of that wheel;
    writing into it would patch them all (this happened once, to the twin's copy: see
    tests/build/test_patched_sdk.py's hard-link test)."""
    temporary = path + ".patching"
    with open(temporary, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    os.chmod(temporary, os.stat(path).st_mode & 0o7777)
    os.replace(temporary, path)


def apply_patch(patch, target, allow_offset=False):
    """Apply one patch (from ``load``) to the tree at ``target``; returns the files it changed."""
    changed = []
    for relative, hunks in file_diffs(patch["text"]):
        path = os.path.join(target, relative)
        where = "%s/%s: %s" % (patch["distribution"], patch["name"], relative)
        if not os.path.isfile(path):
            raise PatchError("%s: no such file in the staged tree" % where)
        with open(path, encoding="utf-8", newline="") as handle:
            lines = handle.read().splitlines(keepends=True)
        patched = apply_to_lines(lines, hunks, where, allow_offset)
        replace_file(path, "".join(patched))
        changed.append(relative)
    return changed


def record_hash(data):
    """A RECORD hash (PEP 376/627): sha256, urlsafe base64 without padding."""
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def records(target):
    """(path, [lines with their line ends]) of every ``*.dist-info/RECORD`` directly under ``target``."""
    for name in sorted(os.listdir(target)):
        record = os.path.join(target, name, "RECORD")
        if name.endswith(".dist-info") and os.path.isfile(record):
            with open(record, encoding="utf-8", newline="") as handle:
                yield record, handle.read().splitlines(keepends=True)


def rewrite_records(target, relatives):
    """Give the RECORD line of each of ``relatives`` (paths under ``target``) the file's sha256 and size
    now; every changed file must be listed in exactly one RECORD."""
    pending = set(relatives)
    for record, lines in records(target):
        touched = False
        for index, line in enumerate(lines):
            row = next(csv.reader([line]), [])
            if row and row[0] in pending:
                # Only this line is rewritten; the others stay as the installer wrote them.
                with open(os.path.join(target, row[0]), "rb") as handle:
                    data = handle.read()
                out = io.StringIO()
                csv.writer(out, lineterminator=line[len(line.rstrip("\r\n")):] or "\n").writerow(
                    [row[0], record_hash(data), str(len(data))])
                lines[index] = out.getvalue()
                pending.discard(row[0])
                touched = True
        if touched:
            replace_file(record, "".join(lines))
    if pending:
        raise PatchError("patched files no RECORD lists: %s" % ", ".join(sorted(pending)))


def apply_all(target, patches=None, allow_offset=False):
    """Apply every patch (default: ``load()``) to the install folder ``target``, then make the RECORDs
    true to the patched bytes; returns the patches applied.  ``allow_offset``: see apply_to_lines."""
    patches = load() if patches is None else patches
    by_file = {}
    for patch in patches:
        for relative in apply_patch(patch, target, allow_offset):
            by_file.setdefault(relative, []).append(patch)
    for relative, applied in sorted(by_file.items()):
        mark_changed(os.path.join(target, relative), applied)
    rewrite_records(target, sorted(by_file))
    return patches


def change_notice(applied):
    """The comment lines that say a file was changed, by which patches and why (Apache-2.0 section
    4(b): boto3's and botocore's modified files must carry a prominent notice that they were changed;
    the SBOM's pedigree alone is not in the file)."""
    lines = ["# Changed by aws-python-keepalive (Apache-2.0 section 4(b)), not as the wheel ships it:\n"]
    lines += ["#   layer/patches/%s/%s: %s\n" % (patch["distribution"], patch["name"], patch["subject"])
              for patch in applied]
    return lines


def mark_changed(path, applied):
    """Append ``change_notice`` to a patched file: at its end, so that every line number (tracebacks,
    the next pin's patch context) stays the wheel's."""
    with open(path, encoding="utf-8", newline="") as handle:
        text = handle.read()
    replace_file(path, with_change_notice(text, applied))


def with_change_notice(text, applied):
    """``text`` (a patched file's content) followed by ``change_notice(applied)``, after one blank line."""
    ending = "" if text.endswith("\n") or not text else "\n"
    return text + ending + "\n" + "".join(change_notice(applied))
