/**
 * Nest wraps an error thrown by a message handler into a plain `{status, message}` object, which
 * would lose whether it can be retried. This filter hands the original error back to the
 * transport, so `reactionTo(error)` sees its `retryable` flag.
 */
import { type ArgumentsHost, Catch, type RpcExceptionFilter } from '@nestjs/common';
import { type Observable, throwError } from 'rxjs';

@Catch()
export class PassThroughRpcFilter implements RpcExceptionFilter<unknown> {
  catch(exception: unknown, _host: ArgumentsHost): Observable<never> {
    return throwError(() => exception);
  }
}
