#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.
"""Kubernetes node labels: the full label set and the label diff.

Pure functions, no I/O. The rules:

* The **full label set** of a node is its own ``labels`` plus the labels
  generated at deploy time under :data:`PREFIX` (rack, shard and one label
  per deployment group). The prefix belongs to baremetal_orch: user labels
  under it are refused by :func:`validate_labels` and dropped by
  :func:`full_label_set`, so the generated labels always win there.
* The **diff** of the live labels against the wanted set first sets new and
  changed labels, then removes labels that are not wanted. A label of a
  protected domain (:data:`PROTECTED_DOMAINS` and their subdomains, e.g.
  ``kubernetes.io/hostname``, ``node-role.kubernetes.io/worker``,
  ``topology.kubernetes.io/zone``) is never removed; it is set only when the
  wanted set names it explicitly with another value.
* No change, no call: an empty diff gives no patch at all.
"""

import dataclasses
import hashlib
import re

from baremetal_orch.common import exception

#: Prefix of the labels baremetal_orch generates (and owns).
PREFIX = 'baremetal-orch.openstack.org/'

#: Domains whose labels (also of their subdomains) are never removed.
PROTECTED_DOMAINS = ('kubernetes.io', 'k8s.io')

#: Generated label: the node's rack.
RACK_LABEL = PREFIX + 'rack'
#: Generated label: the node's Ironic shard.
SHARD_LABEL = PREFIX + 'shard'
#: Generated labels: ``GROUP_LABEL_PREFIX + <group>`` for each group that
#: deployed the node, with the value :data:`GROUP_LABEL_VALUE`.
GROUP_LABEL_PREFIX = PREFIX + 'group.'
GROUP_LABEL_VALUE = 'true'

MAX_NAME_LENGTH = 63
MAX_PREFIX_LENGTH = 253
MAX_VALUE_LENGTH = 63

_NAME_RE = re.compile(r'^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')
_DNS_LABEL = r'[a-z0-9]([-a-z0-9]*[a-z0-9])?'
_PREFIX_RE = re.compile(r'^%s(\.%s)*$' % (_DNS_LABEL, _DNS_LABEL))
_INVALID_NAME_CHARS_RE = re.compile(r'[^-A-Za-z0-9_.]+')
_DIGEST_LENGTH = 8


def split_key(key):
    """Split a label key into ``(prefix, name)``; prefix is None if absent."""
    prefix, sep, name = key.rpartition('/')
    return (prefix if sep else None), name


def _domain(key):
    prefix, _name = split_key(key)
    return prefix.lower() if prefix else None


def is_protected(key):
    """Whether ``key`` belongs to a protected domain or one of its subdomains.

    ``kubernetes.io/arch``, ``node-role.kubernetes.io/worker``,
    ``x.k8s.io/y`` are protected; ``example.com/kubernetes.io``,
    ``mykubernetes.io/a`` and unprefixed keys are not.
    """
    domain = _domain(key)
    if not domain:
        return False
    return any(domain == d or domain.endswith('.' + d)
               for d in PROTECTED_DOMAINS)


def is_reserved(key):
    """Whether ``key`` is under baremetal_orch's own :data:`PREFIX`."""
    return key.startswith(PREFIX)


def _check_name(label, name, what):
    if not name:
        raise exception.InvalidLabel(
            label=label, reason='the %s must not be empty' % what)
    if len(name) > MAX_NAME_LENGTH:
        raise exception.InvalidLabel(
            label=label, reason='the %s is longer than %d characters'
            % (what, MAX_NAME_LENGTH))
    if not _NAME_RE.match(name):
        raise exception.InvalidLabel(
            label=label,
            reason='the %s %r must consist of alphanumeric characters, '
                   "'-', '_' or '.', and start and end with an alphanumeric "
                   'character' % (what, name))


def validate_key(key):
    """Check a label key: ``[prefix/]name``.

    The optional prefix is a lowercase DNS subdomain of at most 253
    characters; the name is 1 to 63 characters of ``[-A-Za-z0-9_.]``,
    starting and ending with an alphanumeric character.

    :raises: InvalidLabel naming the key.
    """
    if not isinstance(key, str):
        raise exception.InvalidLabel(label=repr(key),
                                     reason='the key must be a string')
    if key.count('/') > 1:
        raise exception.InvalidLabel(
            label=key, reason="the key may contain at most one '/'")
    prefix, name = split_key(key)
    if prefix is not None:
        if not prefix:
            raise exception.InvalidLabel(
                label=key, reason="the prefix before '/' must not be empty")
        if len(prefix) > MAX_PREFIX_LENGTH:
            raise exception.InvalidLabel(
                label=key, reason='the prefix is longer than %d characters'
                % MAX_PREFIX_LENGTH)
        if not _PREFIX_RE.match(prefix):
            raise exception.InvalidLabel(
                label=key,
                reason='the prefix %r is not a lowercase DNS subdomain'
                % prefix)
    _check_name(key, name, 'name')


def validate_value(key, value):
    """Check a label value: empty, or a valid name of at most 63 characters.

    :raises: InvalidLabel naming the label's key.
    """
    if not isinstance(value, str):
        raise exception.InvalidLabel(
            label=key, reason='the value %r is not a string' % (value,))
    if value:
        _check_name(key, value, 'value')


def validate_labels(labels, allow_reserved=False):
    """Check a mapping of labels against the Kubernetes label syntax.

    :param labels: a dict of label key to value (both strings).
    :param allow_reserved: accept keys under :data:`PREFIX`. False for labels
        given by users (the prefix is baremetal_orch's); True for full label
        sets that contain the generated labels.
    :raises: InvalidLabel naming the first offending label.
    """
    if not isinstance(labels, dict):
        raise exception.InvalidLabel(
            label=repr(labels), reason='labels must be a mapping')
    for key, value in labels.items():
        validate_key(key)
        if not allow_reserved and is_reserved(key):
            raise exception.InvalidLabel(
                label=key,
                reason='the prefix %s is reserved for labels generated by '
                       'baremetal_orch' % PREFIX.rstrip('/'))
        validate_value(key, value)


def label_name(text, max_length=MAX_NAME_LENGTH):
    """Make a valid label name (or non-empty value) out of ``text``.

    Text that is already valid is returned unchanged. Otherwise runs of
    characters outside ``[-A-Za-z0-9_.]`` become ``-``, the result is cut to
    fit, and ``-<8 hex digits of sha256(text)>`` is appended so two different
    texts never map to the same name (``rack 1`` and ``rack/1`` give
    ``rack-1-<hash1>`` and ``rack-1-<hash2>``).
    """
    text = str(text)
    if len(text) <= max_length and _NAME_RE.match(text):
        return text
    digest = hashlib.sha256(text.encode('utf-8')).hexdigest()[:_DIGEST_LENGTH]
    cleaned = _INVALID_NAME_CHARS_RE.sub('-', text)
    cleaned = cleaned[:max_length - _DIGEST_LENGTH - 1].strip('-_.')
    return '%s-%s' % (cleaned, digest) if cleaned else digest


def group_label_key(group_name):
    """The key of the label telling that ``group_name`` deployed a node."""
    max_length = MAX_NAME_LENGTH - len(GROUP_LABEL_PREFIX) + len(PREFIX)
    return GROUP_LABEL_PREFIX + label_name(group_name, max_length)


def generated_labels(rack_name=None, shard=None, groups=()):
    """The labels generated for a node at deploy time.

    :param rack_name: the node's rack, as
        ``baremetal-orch.openstack.org/rack``.
    :param shard: the node's shard, as ``baremetal-orch.openstack.org/shard``.
    :param groups: names of the deployment groups that deployed the node,
        each as ``baremetal-orch.openstack.org/group.<name>: "true"``.
    :returns: a dict. None or empty values are skipped; names that are not
        valid label names or values are made valid with :func:`label_name`.
    """
    labels = {}
    if rack_name not in (None, ''):
        labels[RACK_LABEL] = label_name(rack_name, MAX_VALUE_LENGTH)
    if shard not in (None, ''):
        labels[SHARD_LABEL] = label_name(shard, MAX_VALUE_LENGTH)
    for group in groups or ():
        if group not in (None, ''):
            labels[group_label_key(group)] = GROUP_LABEL_VALUE
    return labels


def full_label_set(node_labels, generated):
    """The labels a node must carry: its own plus the generated ones.

    User labels under :data:`PREFIX` are dropped: the prefix is owned by
    baremetal_orch, so the generated labels win there (and a generated label
    that no longer applies, e.g. of a group that did not deploy the node this
    time, is removed by the diff). Labels of protected domains given by the
    user are kept and applied (see :func:`diff`).

    :raises: InvalidLabel when a label is not valid.
    """
    labels = {key: value for key, value in (node_labels or {}).items()
              if not (isinstance(key, str) and is_reserved(key))}
    labels.update(generated or {})
    validate_labels(labels, allow_reserved=True)
    return labels


@dataclasses.dataclass(frozen=True)
class LabelDiff:
    """What to change on a Kubernetes node: set first, then remove."""

    #: Labels to add or change (key to new value).
    to_set: dict = dataclasses.field(default_factory=dict)
    #: Keys of the labels to remove, sorted.
    to_remove: tuple = ()

    def is_empty(self):
        """True when nothing changes (and no request must be made)."""
        return not self.to_set and not self.to_remove

    def to_dict(self):
        """A JSON-serializable form, e.g. for task results and events."""
        return {'to_set': dict(sorted(self.to_set.items())),
                'to_remove': list(self.to_remove)}


def diff(existing, wanted):
    """Compare the live labels of a node with the wanted set.

    * a wanted label that is missing or has another value is set (also a
      label of a protected domain: the wanted set names it explicitly);
    * a live label that is not wanted is removed, unless it is protected.

    Example: existing ``{a: 1, b: 2, c: 3}``, wanted ``{a: 1, c: 4, d: 99}``
    gives set ``{c: 4, d: 99}``, remove ``(b,)``.
    """
    existing = existing or {}
    wanted = wanted or {}
    to_set = {key: value for key, value in wanted.items()
              if key not in existing or existing[key] != value}
    to_remove = tuple(sorted(key for key in existing
                             if key not in wanted and not is_protected(key)))
    return LabelDiff(to_set=to_set, to_remove=to_remove)


def merge_patches(label_diff):
    """The JSON merge-patch (RFC 7386) bodies applying ``label_diff``.

    In order: one body setting the new and changed labels, then one removing
    the others (``null`` deletes a key). Each is left out when it would be
    empty, so an empty diff gives an empty list: no request at all.
    """
    patches = []
    if label_diff.to_set:
        patches.append({'metadata': {'labels': dict(label_diff.to_set)}})
    if label_diff.to_remove:
        patches.append({'metadata': {'labels': {
            key: None for key in label_diff.to_remove}}})
    return patches


def apply_diff(existing, label_diff):
    """The labels after ``label_diff`` is applied to ``existing``."""
    labels = dict(existing or {})
    labels.update(label_diff.to_set)
    for key in label_diff.to_remove:
        labels.pop(key, None)
    return labels
