/**
 * An SDK type as it travels in JSON: the generated client turns ISO date strings into Dates after
 * parsing, so on the wire a `Date` field is a string. An expected answer typed `Wire<SdkType>` is
 * checked by tsc against the SDK's required fields and their types; `toEqual` then checks the answer is it.
 */
export type Wire<T> = T extends Date ? string : T extends readonly (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;
