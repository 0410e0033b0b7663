// The failure converter for encrypted deployments, loaded by path (the worker bundles it into the
// workflow sandbox, so it imports nothing from Node): failure messages and stack traces move into
// an encoded payload, which the payload codec then encrypts like any other.
import { DefaultFailureConverter } from '@temporalio/common';

export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
