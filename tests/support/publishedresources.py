"""PublishedResource manifests shared by the unit and devcluster tests."""

from __future__ import annotations

from typing import Any

import yaml

# The example of api-syncagent-notes §1, with every remaining field added.
EXAMPLE: dict[str, Any] = yaml.safe_load(
    r"""
apiVersion: syncagent.kcp.io/v1alpha1
kind: PublishedResource
metadata: {name: publish-certificates, labels: {agent: certs}}
spec:
  resource: {apiGroup: cert-manager.io, kind: Certificate, versions: [v1]}
  projection: {group: certs.example.com, kind: Sertifikat, plural: sertifikater, shortNames: [serts],
               categories: [], scope: Namespaced, versions: {v1: v1beta1}}
  naming:
    namespace: '{{ .ClusterName }}'
    name: '{{ .Object.metadata.namespace | sha3short }}-{{ .Object.metadata.name | sha3short }}'
  filter:
    namespace: {matchLabels: {sync: "true"}}
    resource:
      matchLabels: {include: me}
      matchExpressions: [{key: tier, operator: In, values: [gold]}, {key: skip, operator: DoesNotExist}]
  enableWorkspacePaths: true
  mutation:
    spec:
      - {regex: {path: spec.secretName, pattern: "(.+)", replacement: "cert-\\1"}}
      - {template: {path: spec.owner, template: "{{ .Value.String }}"}}
      - {cel: {path: spec.size, expression: "value * 2"}}
    status: [{delete: {path: status.internalRef}}]
  related:
    - identifier: tls-secret
      origin: service
      group: ""
      version: v1
      resource: secrets
      object: {reference: {path: spec.secretName, regex: {pattern: "^cert-", replacement: ""}}}
      watch: {byOwner: {}}
      cleanup: true
      syncStatus: false
    - identifier: credentials
      origin: kcp
      group: example.com
      version: v1
      resource: things
      identityHash: abc123
      projection: {group: local.example.com, version: v2, resource: localthings}
      object:
        selector:
          matchLabels: {owner: "{{ .RemoteObject.metadata.name }}"}
          rewrite: {template: {template: "{{ .Value }}-copy"}}
        namespace: {template: {template: "{{ .Object.metadata.namespace }}"}}
      mutation: {spec: [{delete: {path: metadata.labels}}]}
      watch: {bySelector: {matchLabels: {app: db}}}
      syncStatus: true
    - identifier: legacy
      origin: service
      kind: ConfigMap
      object:
        selector: {matchLabels: {a: b}, rewrite: {regex: {pattern: "x", replacement: "y"}}}
        namespace: {reference: {path: metadata.namespace}}
  synchronization: {enabled: true}
status:
  resourceSchemaName: v1a2b3c4d.sertifikater.certs.example.com
  conditions:
    - {type: Ready, status: "True", reason: SchemaReady, message: ok,
       lastTransitionTime: "2026-11-25T10:00:00Z", observedGeneration: 3}
"""
)

MINIMAL: dict[str, Any] = {
    "apiVersion": "syncagent.kcp.io/v1alpha1",
    "kind": "PublishedResource",
    "metadata": {"name": "publish-configmaps"},
    "spec": {"resource": {"apiGroup": "", "kind": "ConfigMap"}},
}
