/**
 * The fixed choices of a TypedInput row, shown before the sources: `fixed: [values]` (labelled by
 * the value, `multiple` for several at once) or `fixed: { value, label, options, optionLabels }`.
 */
export function fixedType(row: SvcRow): SvcFixedChoice | undefined {
  if (!row.fixed) return undefined;
  if (Array.isArray(row.fixed)) return { value: 'fixed', label: 'label.fixed', options: row.fixed, multiple: !!row.multiple };
  return row.fixed;
}

/** The TypedInput type of a row's fixed choices, labelled from the node's catalog. */
export function typedChoice(node: EditorNode, fixed: SvcFixedChoice): TypedInputType {
  const optionLabels = fixed.optionLabels;
  const options = fixed.options.map((value, index) => (optionLabels ? { value, label: node._(`${node.type}.${optionLabels[index]}`) } : value));
  const choice: TypedInputType = {
    value: fixed.value,
    label: node._(`${node.type}.${fixed.label}`),
    icon: 'fa fa-list',
    options,
    multiple: !!fixed.multiple,
  };
  if (fixed.multiple) {
    // The chosen options themselves ("car, truck"), not Node-RED's "2 selected".
    choice.valueLabel = (container, chosen) => {
      container.text(chosen.map((option) => (typeof option === 'string' ? option : option.label || option.value)).join(', '));
    };
  }
  return choice;
}
