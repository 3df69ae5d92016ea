import { isPlainObject, isStringArray, type PlainObject } from './guards';

/**
 * The first reason why a producer's output (expanded io schema) may not satisfy a consumer's input,
 * or undefined when every payload valid for the producer is valid for the consumer. Rules:
 * types equal (a number consumer accepts an integer producer); a nullable producer needs a nullable
 * consumer; every consumer-required property is a required producer property; shared properties
 * recurse; a closed consumer (additionalProperties: false) needs a closed producer whose properties
 * it all declares; producer enums within consumer enums; identical patterns; producer bounds
 * (minimum/maximum, minLength/maxLength, minItems/maxItems) inside the consumer's; a consumer bound
 * with no producer bound is a mismatch.
 */
export function ioSubsetMismatch(consumer: PlainObject, producer: PlainObject, where = 'schema'): string | undefined {
  const cType = consumer.type;
  const pType = producer.type;
  if (typeof cType !== 'string' || typeof pType !== 'string') return `${where}: type missing`;
  if (!(cType === pType || (cType === 'number' && pType === 'integer'))) {
    return `${where}: input expects ${cType}, output gives ${pType}`;
  }
  if (producer.nullable === true && consumer.nullable !== true) return `${where}: output is nullable, input is not`;
  if (cType === 'array') {
    if (!isPlainObject(consumer.items) || !isPlainObject(producer.items)) return `${where}: array items missing`;
    return (
      ioSubsetMismatch(consumer.items, producer.items, `${where}.items`) ??
      boundMismatch(consumer, producer, 'minItems', 'min', where) ??
      boundMismatch(consumer, producer, 'maxItems', 'max', where)
    );
  }
  if (cType === 'object') return objectMismatch(consumer, producer, where);
  if ((cType === 'string' || cType === 'integer') && Array.isArray(consumer.enum)) {
    if (!Array.isArray(producer.enum)) return `${where}: input allows only enum ${JSON.stringify(consumer.enum)}, output is unconstrained`;
    const allowed = new Set<unknown>(consumer.enum);
    const extra = producer.enum.find((value) => !allowed.has(value));
    if (extra !== undefined) return `${where}: output enum value ${JSON.stringify(extra)} is not allowed by input`;
  }
  if (cType === 'string') {
    if (typeof consumer.pattern === 'string' && consumer.pattern !== producer.pattern) {
      return `${where}: input pattern ${JSON.stringify(consumer.pattern)} is not guaranteed by output`;
    }
    return boundMismatch(consumer, producer, 'minLength', 'min', where) ?? boundMismatch(consumer, producer, 'maxLength', 'max', where);
  }
  if (cType === 'number' || cType === 'integer') {
    return boundMismatch(consumer, producer, 'minimum', 'min', where) ?? boundMismatch(consumer, producer, 'maximum', 'max', where);
  }
  return undefined;
}

function objectMismatch(consumer: PlainObject, producer: PlainObject, where: string): string | undefined {
  const cProps = isPlainObject(consumer.properties) ? consumer.properties : {};
  const pProps = isPlainObject(producer.properties) ? producer.properties : {};
  const cRequired = isStringArray(consumer.required) ? consumer.required : [];
  const pRequired = new Set(isStringArray(producer.required) ? producer.required : []);
  for (const key of cRequired) {
    if (!Object.prototype.hasOwnProperty.call(pProps, key)) return `${where}: required property "${key}" is not produced`;
    if (!pRequired.has(key)) return `${where}: required property "${key}" is optional in the output`;
  }
  for (const [key, cProp] of Object.entries(cProps)) {
    const pProp = pProps[key];
    if (!isPlainObject(pProp) || !isPlainObject(cProp)) continue;
    const nested = ioSubsetMismatch(cProp, pProp, `${where}.properties.${key}`);
    if (nested !== undefined) return nested;
  }
  if (consumer.additionalProperties === false) {
    if (producer.additionalProperties !== false) return `${where}: input is closed (additionalProperties: false), output is open`;
    const extra = Object.keys(pProps).find((key) => !Object.prototype.hasOwnProperty.call(cProps, key));
    if (extra !== undefined) return `${where}: output property "${extra}" is not declared by the closed input`;
  }
  return undefined;
}

function boundMismatch(consumer: PlainObject, producer: PlainObject, keyword: string, kind: 'min' | 'max', where: string): string | undefined {
  const cBound = consumer[keyword];
  if (typeof cBound !== 'number') return undefined;
  const pBound = producer[keyword];
  if (typeof pBound !== 'number') return `${where}: input sets ${keyword} ${cBound}, output sets none`;
  const fits = kind === 'min' ? pBound >= cBound : pBound <= cBound;
  return fits ? undefined : `${where}: output ${keyword} ${pBound} is outside input ${keyword} ${cBound}`;
}
