#!/bin/sh
# Writes types.go: the apiextensions/v1 CRD spec types and their JSON (un)marshalers, copied unchanged
# from a k8s.io/apiextensions-apiserver checkout ($1), so main.go encodes with the real struct layout.
set -eu
src="$1/pkg/apis/apiextensions/v1"
structs='CustomResourceDefinitionSpec|CustomResourceConversion|WebhookConversion|WebhookClientConfig|ServiceReference|CustomResourceDefinitionVersion|SelectableField|CustomResourceColumnDefinition|CustomResourceDefinitionNames|CustomResourceValidation|CustomResourceSubresources|CustomResourceSubresourceStatus|CustomResourceSubresourceScale|JSONSchemaProps|ValidationRule|JSON|JSONSchemaPropsOrArray|JSONSchemaPropsOrBool|JSONSchemaPropsOrStringArray|ExternalDocumentation'
aliases='ResourceScope|ConversionStrategyType|FieldValueErrorReason|JSONSchemaURL|ValidationRules|JSONSchemaDependencies|JSONSchemaDefinitions'
{
  echo 'package main'
  echo 'import ("bytes"; "encoding/json"; "errors")'
  echo 'var jsTrue = []byte("true"); var jsFalse = []byte("false"); var nullLiteral = []byte("null"); var _ = errors.New'
  for f in types.go types_jsonschema.go; do
    awk -v s="^type ($structs) struct" -v a="^type ($aliases) " '$0 ~ a {print; next} $0 ~ s {p=1} p {print} /^}/ {p=0}' "$src/$f"
  done
  awk '/^func \(s \*?(JSON|JSONSchemaPropsOrBool|JSONSchemaPropsOrStringArray|JSONSchemaPropsOrArray)\) (MarshalJSON|UnmarshalJSON)/ {p=1} p {print} /^}/ {p=0}' "$src/marshal.go"
} > types.go
